"""`triage.preexisting.compare`: a failure is matched with the default branch's by identity (test
name; diagnostic file, code and message without line numbers), never by exact text (issue 16)."""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from ci_agent.report import Outcome, Report, ReportDiagnostic, ReportFailure, RunError, Severity, TestCounts
from ci_agent.triage import Verdict
from ci_agent.triage.preexisting import MAX_NAMED, MAX_SHOWN_CHARS, PartialOverlap, compare

WHERE = "main (its latest run, 41)"


def failure(name: str, outcome: Outcome = Outcome.FAILED, message: str = "assert 1 == 2",
            classname: str | None = None) -> ReportFailure:
    return ReportFailure(name, outcome, message, (), None, None, classname)


def diag(file: str, code: str, message: str, line: int = 10, severity: Severity = Severity.ERROR,
         in_repo: bool = True) -> ReportDiagnostic:
    return ReportDiagnostic(severity, file, line, 5, code, message, None, None, in_repo)


def report(failures: Sequence[ReportFailure] = (), diagnostics: Sequence[ReportDiagnostic] = (),
           run_errors: Sequence[str] = ()) -> Report:
    return Report((), tuple(diagnostics), TestCounts(), tuple(failures),
                  tuple(RunError("job log 7-test.log", m) for m in run_errors), 0, 0)


def test_every_failure_red_there_too_is_pre_existing() -> None:
    ours = report([failure("tests/test_cart.py::test_total"), failure("tests/test_cart.py::test_tax")])
    theirs = report([failure("tests/test_cart.py::test_tax", Outcome.ERROR, "other text"),
                     failure("tests/test_cart.py::test_total", message="assert 3 == 4"),
                     failure("tests/test_other.py::test_more")])
    found = compare(ours, theirs, where=WHERE)
    assert isinstance(found, Verdict)
    assert found.kind == "pre_existing"
    assert found.tests == ("tests/test_cart.py::test_total", "tests/test_cart.py::test_tax")
    assert found.reason == ("All 2 failures here also fail on main (its latest run, 41): this change "
                            "did not cause them")
    assert found.to_json()["kind"] == "pre_existing"


def test_a_diagnostic_matches_on_another_line_and_from_another_checkout() -> None:
    ours = report(diagnostics=[diag("src/Cart.cs", "CS0103", "The name 'total' does not exist", line=12)])
    theirs = report(diagnostics=[diag("src/Cart.cs", "CS0103", "The name 'total' does not exist", line=40)])
    assert isinstance(compare(ours, theirs), Verdict)
    moved = report(diagnostics=[diag("/home/runner/work/app/x.go", "", "x.go:12:3: undefined: total",
                                     in_repo=False)])
    there = report(diagnostics=[diag("/builds/acme/app/x.go", "", "x.go:31:9: undefined: total",
                                     in_repo=False)])
    found = compare(moved, there)
    assert isinstance(found, Verdict) and found.tests == ()
    assert found.evidence == ("/home/runner/work/app/x.go: x.go:12:3: undefined: total",)


def test_another_message_code_or_file_is_another_failure() -> None:
    ours = report(diagnostics=[diag("src/Cart.cs", "CS0103", "The name 'total' does not exist")])
    for other in (diag("src/Cart.cs", "CS0103", "The name 'subtotal' does not exist"),
                  diag("src/Cart.cs", "CS0246", "The name 'total' does not exist"),
                  diag("src/Order.cs", "CS0103", "The name 'total' does not exist"),
                  diag("src/Cart.cs", "CS0103", "The name 'total' does not exist",
                       severity=Severity.WARNING)):
        assert compare(ours, report(diagnostics=[other])) is None


def test_some_red_there_is_a_partial_overlap_naming_them() -> None:
    ours = report([failure("test_old"), failure("test_new")],
                  [diag("src/a.py", "E1", "broken")])
    theirs = report([failure("test_old")], [diag("src/a.py", "E1", "broken", line=99)])
    found = compare(ours, theirs, where=WHERE)
    assert isinstance(found, PartialOverlap)
    assert (found.shared, found.tests, found.shared_count, found.new_count) == (
        ("test_old", "src/a.py: E1 broken"), ("test_old",), 2, 1)
    assert found.sentence() == ("2 of 3 failures also fail on main (its latest run, 41), so this change "
                                "did not cause them: test_old; src/a.py: E1 broken")


def test_nothing_in_common_or_nothing_red_there_is_nothing() -> None:
    ours = report([failure("test_new")])
    assert compare(ours, report([failure("test_other")])) is None
    assert compare(ours, report()) is None
    assert compare(report(), report([failure("test_new")])) is None
    passed_there = report([failure("test_new", Outcome.PASSED)])
    assert compare(ours, passed_there) is None


def test_run_errors_alone_prove_nothing_but_a_new_one_is_new() -> None:
    generic = "not a format ci-agent reads (no build log, test log or result file found)"
    assert compare(report(run_errors=[generic]), report(run_errors=[generic])) is None
    ours = report([failure("test_old")], run_errors=["pytest stopped early: ImportError in conftest"])
    found = compare(ours, report([failure("test_old")]))
    assert isinstance(found, PartialOverlap) and (found.shared_count, found.new_count) == (1, 1)
    same = report([failure("test_old")], run_errors=["truncated XML at line 12"])
    assert isinstance(compare(same, report([failure("test_old")], run_errors=["truncated XML at line 80"])),
                      Verdict)


def test_a_tests_ids_and_times_do_not_make_it_another_test() -> None:
    ours = report([failure("test_upload[3f2b8c1e-0d4a-4b6e-9f1a-2c3d4e5f6a7b]")])
    theirs = report([failure("test_upload[9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d]")])
    assert isinstance(compare(ours, theirs), Verdict)
    assert compare(report([failure("test_add[2]")]), report([failure("test_add[3]")])) is None


def test_the_same_name_in_another_class_is_another_test() -> None:
    ours = report([failure("test_total", classname="tests.test_cart")])
    assert compare(ours, report([failure("test_total", classname="tests.test_order")])) is None
    assert isinstance(compare(ours, report([failure("test_total", classname="tests.test_cart")])), Verdict)


def test_many_failures_are_named_up_to_a_cap() -> None:
    many = report([failure(f"test_{i}") for i in range(MAX_NAMED + 15)])
    found = compare(many, many)
    assert isinstance(found, Verdict)
    assert len(found.tests) == len(found.evidence) == MAX_NAMED
    assert f"All {MAX_NAMED + 15} failures" in found.reason


# -- properties ------------------------------------------------------------------------------

_hostile = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=400)
_names = st.lists(st.one_of(_hostile, st.sampled_from(["a::b", "x[1]", "`code`", "<!-- -->", "\n\n"])),
                  min_size=1, max_size=12)


def _kind(found: Verdict | PartialOverlap | None) -> str:
    return "none" if found is None else "partial" if isinstance(found, PartialOverlap) else found.kind


@settings(max_examples=150, deadline=None)
@given(names=_names, extra=_names, data=st.data())
def test_order_never_changes_the_answer(names: list[str], extra: list[str], data: st.DataObject) -> None:
    ours = [failure(n) for n in names]
    theirs = [failure(n) for n in [*names[: len(names) // 2 + 1], *extra]]
    first = compare(report(ours), report(theirs))
    again = compare(report(data.draw(st.permutations(ours))), report(data.draw(st.permutations(theirs))))
    assert _kind(first) == _kind(again)
    if first is not None:
        shown = first.evidence if isinstance(first, Verdict) else first.shared
        assert again is not None
        shown_again = again.evidence if isinstance(again, Verdict) else again.shared
        assert len(first.tests) == len(again.tests)
        if len(set(names)) <= MAX_NAMED:
            assert sorted(shown) == sorted(shown_again)


@settings(max_examples=150, deadline=None)
@given(names=_names, extra=_names)
def test_red_there_too_is_pre_existing_whatever_else_fails_there(names: list[str], extra: list[str]) -> None:
    """Hostile names included: every shown failure is one bounded line."""
    ours = report([failure(n) for n in names])
    found = compare(ours, report([failure(n) for n in [*extra, *reversed(names)]]))
    assert isinstance(found, Verdict) and found.kind == "pre_existing"
    for line in found.evidence:
        assert "\n" not in line and len(line) <= MAX_SHOWN_CHARS


@settings(max_examples=150, deadline=None)
@given(lines=st.lists(st.tuples(st.integers(1, 10**6), st.integers(1, 10**6)), min_size=1, max_size=8))
def test_moved_lines_are_the_same_diagnostics(lines: list[tuple[int, int]]) -> None:
    def at(i: int, line: int) -> ReportDiagnostic:
        return diag(f"src/m{i}.c", "C2065", f"m{i}.c({line}): 'x' undeclared, see line {line}", line=line)
    ours = report(diagnostics=[at(i, a) for i, (a, _) in enumerate(lines)])
    theirs = report(diagnostics=[at(i, b) for i, (_, b) in enumerate(lines)])
    assert isinstance(compare(ours, theirs), Verdict)


@settings(max_examples=100, deadline=None)
@given(names=_names, new=_hostile)
def test_one_new_failure_keeps_the_attempt(names: list[str], new: str) -> None:
    ours = report([failure(n) for n in [*names, "test_only_here::" + new]])
    found = compare(ours, report([failure(n) for n in names]))
    assert isinstance(found, PartialOverlap) and found.new_count >= 1
