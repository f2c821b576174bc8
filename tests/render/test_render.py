"""Renderers: budgets that never drop silently, exact JSON contract, injection-proof annotations,
GitLab Code Quality and JUnit conversion."""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lxml import etree

from ci_agent.distill import Input, distill, resolve_root
from ci_agent.parsers import XML_PARSERS, parse_path
from ci_agent.render import render, render_github, render_json, render_llm, render_markdown
from ci_agent.render.budget import size
from ci_agent.render.codequality import render_codequality
from ci_agent.render.github import escape_data, escape_property
from ci_agent.render.junit import render_junit
from ci_agent.report import (
    Outcome,
    ParseResult,
    Report,
    ReportDiagnostic,
    ReportFailure,
    RunError,
    Severity,
    SourceInfo,
    TestCase,
    TestCounts,
)
from tests.conftest import shared_fixture

SCHEMA = json.loads((Path(__file__).parents[2] / "ci_agent" / "schemas" / "report-v1.json").read_text())


def _diag(i: int, severity: Severity = Severity.ERROR, message: str | None = None,
          file: str | None = None) -> ReportDiagnostic:
    return ReportDiagnostic(severity, file or f"src/F{i}.cs", i, 3, f"CS{1000 + i}",
                            message or f"message number {i} " + "x" * 60, "src/App.csproj", None, True)


def _failure(i: int, frames: int = 2) -> ReportFailure:
    """Failure i fails at a line of its own: a cause of its own (ci_agent/cluster.py)."""
    return ReportFailure(f"Ns.Tests.T.Case{i}", Outcome.FAILED, f"Expected {i} but was {i + 1}",
                         tuple(f"at Ns.C.M{j}() in src/C.cs:line {100 * i + j}" for j in range(frames)),
                         "src/C.cs", 1)


def _report(errors: int = 0, warnings: int = 0, failures: int = 0, run_errors: int = 0) -> Report:
    diags = [_diag(i) for i in range(errors)]
    diags += [_diag(1000 + i, Severity.WARNING) for i in range(warnings)]
    return Report(
        sources=(SourceInfo("build.log", "msbuild", 100_000),),
        diagnostics=tuple(diags),
        counts=TestCounts(failures + 10, 10, failures, 0),
        failures=tuple(_failure(i) for i in range(failures)),
        run_errors=tuple(RunError("x.trx", f"test host crashed {i}") for i in range(run_errors)),
        input_bytes=100_000,
        printed_diagnostics=2 * (errors + warnings),
    )


# Either one `... N more X omitted` line per section or, when the budget is tiny, one line for all.
_OMITTED_RE = re.compile(r"(\d+) more (errors|warnings|failed tests|run errors)\b")


def _shown_and_omitted(text: str, noun: str, item_re: str) -> tuple[int, int]:
    shown = len(re.findall(item_re, text, flags=re.MULTILINE))
    omitted = sum(int(n) for n, what in _OMITTED_RE.findall(text) if what == noun)
    return shown, omitted


# --------------------------------------------------------------------------- llm budget

@pytest.mark.parametrize("budget", [300, 700, 1500, 4000, 8000, 20000])
def test_llm_never_exceeds_the_budget_and_accounts_for_every_item(budget: int) -> None:
    report = _report(errors=60, warnings=40, failures=15, run_errors=2)
    text = render_llm(report, budget)
    assert size(text) <= budget
    for noun, item_re, total in (
        ("errors", r"^src/F\d+\.cs\(\d+,3\): error ", 60),
        ("warnings", r"^src/F\d+\.cs\(\d+,3\): warning ", 40),
        ("failed tests", r"^- Ns\.Tests\.T\.Case\d+", 15),
    ):
        shown, omitted = _shown_and_omitted(text, noun, item_re)
        assert shown + omitted == total, (noun, shown, omitted)


def test_llm_keeps_priority_errors_before_failures_before_warnings() -> None:
    text = render_llm(_report(errors=5, warnings=50, failures=3), 1600)
    assert "error CS1004" in text and "Case2" in text
    assert "more warnings omitted" in text
    assert text.index("ERRORS") < text.index("FAILED TESTS") < text.index("WARNINGS")


def test_llm_everything_fits_without_omission_lines() -> None:
    text = render_llm(_report(errors=2, warnings=1, failures=1), 8000)
    assert "omitted" not in text
    assert "2 errors, 1 warning, tests: 1 failed, 10 passed, 0 skipped of 11" in text.splitlines()[0]


def test_long_messages_are_truncated_with_a_marker() -> None:
    report = _report()
    long = _diag(1, message="y" * 5000)
    report = Report(report.sources, (long,), report.counts, (), (), 1, 1)
    text = render_llm(report, 8000)
    assert "more chars cut]" in text and size(text) < 1500


def test_frames_are_capped_with_a_count() -> None:
    report = Report((), (), TestCounts(1, 0, 1, 0), (_failure(1, frames=9),), (), 0, 0)
    text = render_llm(report)
    assert "at Ns.C.M4()" in text and "at Ns.C.M5()" not in text
    assert "... 4 more project frames" in text


def test_hostile_control_characters_do_not_reach_the_llm_text() -> None:
    report = Report((), (_diag(1, message="evil\x1b[2J\x00\u202etext"),), TestCounts(), (), (), 0, 1)
    text = render_llm(report)
    assert "\x1b" not in text and "\x00" not in text and "\u202e" not in text
    assert "evil[2Jtext" in text


# --------------------------------------------------------------------------- markdown

def test_markdown_is_bounded_and_says_what_it_omitted() -> None:
    text = render_markdown(_report(errors=300, warnings=300, failures=50), 10_000)
    assert size(text) <= 10_000
    assert "more warnings omitted" in text


def test_markdown_escapes_html_and_markdown_in_messages() -> None:
    d = _diag(1, message="<script>alert(1)</script> **bold** [link](http://x) @someone")
    text = render_markdown(Report((), (d,), TestCounts(), (), (), 0, 1))
    assert "<script>" not in text and "&lt;script&gt;" in text
    assert "**bold**" not in text and "](http" not in text
    assert "@someone" not in text  # no mentions from log text


def test_markdown_failure_block_survives_backticks() -> None:
    f = ReportFailure("Ns.T.A", Outcome.FAILED, "```\n# not a heading\n```", (), None, None)
    text = render_markdown(Report((), (), TestCounts(1, 0, 1, 0), (f,), (), 0, 0))
    assert "````text\n```\n# not a heading\n```\n````" in text


# --------------------------------------------------------------------------- json

def test_json_matches_the_schema_and_keeps_everything_the_llm_text_dropped() -> None:
    report = _report(errors=200, warnings=100, failures=40, run_errors=1)
    llm = render_llm(report, 2000)
    assert "more errors omitted" in llm
    data = json.loads(render(report, "json", 2000))
    jsonschema.validate(data, SCHEMA)
    assert data["schema"] == "ci-agent/report@1"
    assert len(data["diagnostics"]) == 300 == data["stats"]["unique_diagnostics"]
    assert len(data["tests"]["failures"]) == 40
    assert data["stats"]["llm_bytes"] == size(llm)
    assert data["stats"]["printed_diagnostics"] == 600


def test_json_keys_are_exactly_the_contract() -> None:
    data = json.loads(render_json(_report(errors=1, failures=1, run_errors=1), 10))
    assert list(data) == ["schema", "sources", "diagnostics", "tests", "run_errors", "stats"]
    assert list(data["diagnostics"][0]) == ["severity", "file", "line", "column", "code", "message",
                                            "project", "origin", "in_repo"]
    assert list(data["tests"]) == ["total", "passed", "failed", "skipped", "failures", "clusters"]
    assert list(data["tests"]["failures"][0]) == ["name", "outcome", "message", "frames", "file", "line"]
    assert list(data["stats"]) == ["input_bytes", "printed_diagnostics", "unique_diagnostics", "llm_bytes"]


def test_schema_rejects_extra_or_mistyped_keys() -> None:
    data = json.loads(render_json(_report(errors=1), 10))
    data["diagnostics"][0]["line"] = "12"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(data, SCHEMA)


# --------------------------------------------------------------------------- github

_OUR_LINE_RE = re.compile(r"^::(error|warning|notice)( [a-z]+=[^,:\n]*(,[a-z]+=[^,:\n]*)*)?::[^\n]*$")


def test_escaping_follows_the_actions_toolkit() -> None:
    assert escape_data("50% done\r\nnext") == "50%25 done%0D%0Anext"
    assert escape_property("C:\\a,b:c%") == "C%3A\\a%2Cb%3Ac%25"


def test_hostile_messages_cannot_inject_workflow_commands() -> None:
    hostile = [
        "::set-env name=X::y",
        "fine\n::error::injected\r\n::add-mask::secret",
        "x\u2028::warning::line separator",
        "::stop-commands::token",
    ]
    diags = tuple(_diag(i, message=m, file=f"src/a,b:{i}.cs") for i, m in enumerate(hostile))
    failure = ReportFailure("Ns.T::x\n::error::y", Outcome.FAILED, "::notice::z\nmore", ("at ::x",),
                            "t.cs", 1)
    report = Report((), diags, TestCounts(1, 0, 1, 0), (failure,), (RunError("a\n::x", "b\n::y"),), 0, 4)
    out = render_github(report)
    lines = out.splitlines()
    assert lines and all(_OUR_LINE_RE.match(line) for line in lines), out
    assert "file=src/a%2Cb%3A0.cs" in out


def test_at_most_ten_annotations_per_type_then_a_notice() -> None:
    out = render_github(_report(errors=15, warnings=12, failures=3))
    lines = out.splitlines()
    assert sum(line.startswith("::error") for line in lines) == 10
    assert sum(line.startswith("::warning") for line in lines) == 10
    assert lines[-1].startswith("::notice ")
    assert "8 errors%2C 2 warnings" not in lines[-1]  # counts are in the data part, unescaped commas
    assert "8 errors, 2 warnings not annotated" in lines[-1]


def test_annotation_properties_for_in_repo_and_sdk_files() -> None:
    sdk = ReportDiagnostic(Severity.WARNING, r"C:\Program Files\dotnet\sdk\x.targets", 5, 5, "MSB3026",
                           "Could not copy", r"App\App.csproj", None, False)
    out = render_github(Report((), (_diag(7), sdk), TestCounts(), (), (), 0, 2))
    first, second = out.splitlines()
    assert first.startswith("::error file=src/F7.cs,line=7,col=3,title=error CS1007::")
    # pinned to the in-repo project; the SDK location is told in the message, unescaped there
    assert second.startswith("::warning file=App\\App.csproj,title=warning MSB3026::C:\\Program Files")


# --------------------------------------------------------------------------- codequality

def test_codequality_issues() -> None:
    no_file = ReportDiagnostic(Severity.ERROR, None, None, None, "MSB1011", "two projects", None,
                               "MSBUILD", False)
    report = Report((), (_diag(1), _diag(2, Severity.WARNING), no_file), TestCounts(), (), (), 0, 3)
    issues = json.loads(render_codequality(report))
    assert [i["severity"] for i in issues] == ["critical", "minor", "critical"]
    assert issues[0]["location"] == {"path": "src/F1.cs", "lines": {"begin": 1}}
    assert issues[2]["location"] == {"path": "MSBUILD", "lines": {"begin": 1}}
    sdk = ReportDiagnostic(Severity.ERROR, r"C:\Program Files\dotnet\sdk\x.targets", 5381, 5, "MSB3027",
                           "Could not copy", "App/App.csproj", None, False)
    issue = json.loads(render_codequality(Report((), (sdk,), TestCounts(), (), (), 0, 1)))[0]
    assert issue["location"] == {"path": "App/App.csproj", "lines": {"begin": 1}}  # not the .targets line
    assert len({i["fingerprint"] for i in issues}) == 3
    again = json.loads(render_codequality(report))
    assert [i["fingerprint"] for i in again] == [i["fingerprint"] for i in issues]
    for i in issues:
        assert set(i) == {"description", "check_name", "fingerprint", "severity", "location"}


# --------------------------------------------------------------------------- junit

def test_junit_from_a_real_trx_is_valid_and_keeps_every_case() -> None:
    trx = shared_fixture("enricomi/trx/yami_YAMILEX_2015-10-24_04_18_59.trx")
    result = parse_path(trx, keep_cases=True)
    assert result.cases is not None and result.counts is not None
    xml = render_junit([(str(trx), result)])
    root = etree.fromstring(xml.encode("utf-8"))
    cases = root.findall(".//testcase")
    assert len(cases) == result.counts.total
    failed = [c for c in cases if c.find("failure") is not None or c.find("error") is not None]
    assert len(failed) == result.counts.failed
    assert len([c for c in cases if c.find("skipped") is not None]) == result.counts.skipped
    if "junit" in XML_PARSERS:  # our own JUnit reader agrees with what we wrote
        from io import BytesIO

        back = XML_PARSERS["junit"].parse(BytesIO(xml.encode("utf-8")), "converted.xml")
        assert back.counts == result.counts


def test_junit_strips_characters_xml_forbids() -> None:
    case = TestCase("bad\x00name\x1b", Outcome.FAILED, classname="Ns.C", message="m\x0bsg \ud800 \ufffe",
                    stack="at x\x01", stdout="out\x07")
    xml = render_junit([("a.trx", ParseResult("trx", cases=[case, TestCase("ok", Outcome.PASSED)]))])
    root = etree.fromstring(xml.encode("utf-8"))
    assert root.find(".//testcase").get("name") == "badname"
    assert root.get("tests") == "2" and root.get("failures") == "1"


def test_junit_outcome_mapping() -> None:
    cases = [TestCase(o.value, o, classname="C") for o in Outcome]
    root = etree.fromstring(render_junit([("x", ParseResult("trx", cases=cases))]).encode("utf-8"))
    kinds = {c.get("name"): [e.tag for e in c] for c in root.iter("testcase")}
    assert kinds == {"passed": [], "failed": ["failure"], "skipped": ["skipped"], "timeout": ["failure"],
                     "aborted": ["failure"], "error": ["error"], "inconclusive": ["skipped"]}


# --------------------------------------------------------------------------- real TRX end to end

def test_real_trx_failures_render_in_every_format() -> None:
    trx = shared_fixture("enricomi/trx/yami_YAMILEX_2015-10-24_04_18_59.trx")
    result = parse_path(trx)
    inputs = [Input(SourceInfo(str(trx), result.format, trx.stat().st_size), result)]
    report = distill(inputs, resolve_root(inputs, None, None))  # root inferred from the frames
    assert report.failures
    data = json.loads(render(report, "json"))
    jsonschema.validate(data, SCHEMA)
    # Spanish frames (`en ... en ...:línea N`) still give a project file and line.
    located = [f for f in data["tests"]["failures"] if f["file"]]
    assert located and all(":línea" in f["frames"][0] for f in located)
    assert all(_OUR_LINE_RE.match(line) for line in render(report, "github").splitlines())


def test_failures_with_one_root_cause_are_grouped_in_the_llm_text() -> None:
    frames = ("at Ns.Startup() in s.cs:line 4",)
    same = tuple(ReportFailure(f"Ns.T.Case{i}", Outcome.FAILED, "config missing", frames, "s.cs", 4)
                 for i in range(12))
    report = Report((), (), TestCounts(12, 0, 12, 0), same, (), 0, 0)
    text = render_llm(report)
    assert text.count("config missing") == 1
    # Issue 15: a cluster is counted and two of its tests named (the JSON report has all twelve).
    assert "FAILED TESTS (12 in 1 cluster)" in text
    assert "- 12 tests fail like this: Ns.T.Case0, Ns.T.Case1 and 10 more\n" in text
    assert "Ns.T.Case2" not in text
    # When the group does not fit, the omission line counts tests, not groups. (At 1200 bytes the
    # group fits: each section is granted room for its first items before errors take the rest.)
    errors = tuple(_diag(i) for i in range(40))
    roomy = render_llm(Report((), errors, TestCounts(12, 0, 12, 0), same, (), 0, 40), 1200)
    assert "config missing" in roomy and "more errors omitted" in roomy
    tight = render_llm(Report((), errors, TestCounts(12, 0, 12, 0), same, (), 0, 40), 600)
    assert "... 12 more failed tests omitted" in tight


_text = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=300)


@settings(max_examples=40, deadline=None)
@given(messages=st.lists(_text, max_size=40), failures=st.lists(_text, max_size=15),
       budget=st.integers(min_value=256, max_value=6000))
def test_budget_property(messages: list[str], failures: list[str], budget: int) -> None:
    diags = tuple(_diag(i, Severity.ERROR if i % 3 else Severity.WARNING, message=m)
                  for i, m in enumerate(messages))
    fails = tuple(ReportFailure(f"T.C{i}", Outcome.FAILED, m, (), None, None) for i, m in enumerate(failures))
    report = Report((), diags, TestCounts(len(fails), 0, len(fails), 0), fails, (), 0, len(diags))
    for text in (render_llm(report, budget), render_markdown(report, budget)):
        assert size(text) <= budget
    llm = render_llm(report, budget)
    errors = sum(1 for d in diags if d.severity is Severity.ERROR)
    shown, omitted = _shown_and_omitted(llm, "errors", r"^src/F\d+\.cs\(\d+,3\): error ")
    assert shown + omitted == errors
    shown, omitted = _shown_and_omitted(llm, "failed tests", r"^- T\.C\d+")
    clustered = sum(int(n) for n in re.findall(r"^- (\d+) tests fail like this: ", llm, re.M))
    assert shown + clustered + omitted == len(fails)


def test_lone_surrogates_from_undecodable_input_do_not_break_rendering() -> None:
    report = Report((), (_diag(1, message="bad \udc80 byte"),), TestCounts(), (), (), 0, 1)
    for fmt in ("llm", "markdown", "json", "github", "codequality"):
        text = render(report, fmt, 1000)
        assert text.encode("utf-8", errors="replace")
    assert size(render_llm(report, 300)) <= 300


def test_long_error_lists_cannot_starve_failed_tests_or_warnings() -> None:
    """Each section is granted its first items before any section fills the rest of the budget."""
    errors = tuple(_diag(i, message="x" * 300) for i in range(60))
    warnings = tuple(_diag(100 + i, Severity.WARNING, message="w" * 50) for i in range(5))
    fails = tuple(ReportFailure(f"T.C{i}", Outcome.FAILED, f"boom {i}", (), None, None) for i in range(4))
    report = Report((), errors + warnings, TestCounts(4, 0, 4, 0), fails, (), 0, 65)
    text = render_llm(report, 4000)
    assert len(text.encode()) <= 4000
    assert "boom 0" in text and "boom 2" in text
    assert "w" * 50 in text
    assert "more errors omitted" in text


def test_one_message_at_many_places_is_written_once_with_every_location() -> None:
    same = "'Monster' does not contain a definition for 'HP'"

    def at(file: str, line: int, col: int, message: str = same) -> ReportDiagnostic:
        return ReportDiagnostic(Severity.ERROR, file, line, col, "CS1061", message, None, None, True)

    diags = (at("src/A.cs", 91, 15), at("src/B.cs", 7, 1), at("src/A.cs", 99, 40),
             at("src/C.cs", 1, 1, "another message"))
    text = render_llm(Report((), diags, TestCounts(), (), (), 0, 4))
    assert text.count(same) == 1
    assert f"error CS1061: {same} (3 places)" in text
    assert "    src/A.cs(91,15) (99,40)\n    src/B.cs(7,1)\n" in text
    assert "src/C.cs(1,1): error CS1061: another message" in text
    assert "ERRORS (4 unique)" in text


def test_messages_differing_only_in_numbers_are_told_once_and_say_so() -> None:
    retries = tuple(
        ReportDiagnostic(Severity.WARNING, "sdk/Common.targets", 5381, 5, "MSB3026",
                         f"Could not copy. Beginning retry {i} in 1000ms.", None, None, False)
        for i in range(1, 11)
    )
    text = render_llm(Report((), retries, TestCounts(), (), (), 0, 10))
    assert text.count("Could not copy.") == 1
    assert "(10 times, differing only in numbers)" in text
    assert "WARNINGS (10 unique)" in text


def test_an_omitted_group_counts_its_diagnostics() -> None:
    """Two messages at 100 places each: the first group lists 12 files and counts the other 88
    places; the second group does not fit and is counted as 100 omitted errors."""
    many = tuple(ReportDiagnostic(Severity.ERROR, f"src/F{i}.cs", 1, 1, "CS0103",
                                  "x" * 300 + (" alpha" if i % 2 else " beta"), None, None, True)
                 for i in range(200))
    text = render_llm(Report((), many, TestCounts(), (), (), 0, 200), 900)
    assert "ERRORS (200 unique)" in text
    omitted = int(text.split("\n... ")[1].split(" more errors")[0])
    shown_places = sum(1 for line in text.splitlines() if line.startswith("    src/F"))
    unlisted = int(text.split("    ... and ")[1].split(" more places")[0])
    assert shown_places == 12 and omitted == 100
    assert omitted + shown_places + unlisted == 200
