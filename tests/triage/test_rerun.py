"""`ci_agent.triage.rerun`: the argv that re-runs only the failed tests, per framework.

The argv of each framework is checked as text; pytest's (always), go's and node's (when those
toolchains are on the machine) are run for real against a project with a test that fails once
and passes after, and one that always fails, to see that only the failed tests ran and that the
output confirms exactly the ones that passed. Test names are hostile input: hypothesis feeds
arbitrary names and checks none becomes an option or a broader filter.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ci_agent.engine.collect import collect
from ci_agent.report import (
    Outcome,
    Report,
    ReportDiagnostic,
    ReportFailure,
    RunError,
    Severity,
    SourceInfo,
    TestCounts,
)
from ci_agent.triage.rerun import (
    MAX_TESTS,
    NoRerun,
    RerunPlan,
    detect,
    plan_rerun,
    rerun_command,
    unconfirmed,
)
from ci_agent.triage.rerun_filters import MAX_NAME_CHARS, go_quote, js_quote, vstest_value
from tests.toolchain import PYTHON

SOURCE = "the command"


def report(fmt: str, *names: str, classname: str | None = None,
           diagnostics: tuple[ReportDiagnostic, ...] = (), run_errors: tuple[RunError, ...] = ()) -> Report:
    failures = tuple(ReportFailure(n, Outcome.FAILED, "boom", (), None, None, classname, SOURCE)
                     for n in names)
    return Report(sources=(SourceInfo(SOURCE, fmt, 10),), diagnostics=diagnostics, counts=TestCounts(),
                  failures=failures, run_errors=run_errors, input_bytes=10, printed_diagnostics=0)


def planned(command: Sequence[str], rep: Report) -> RerunPlan:
    found = plan_rerun(command, rep)
    assert isinstance(found, RerunPlan), found
    return found


def refused(command: Sequence[str], rep: Report) -> str:
    found = plan_rerun(command, rep)
    assert isinstance(found, NoRerun), found
    assert rerun_command(command, rep) is None
    return found.reason


# --- the argv per framework ---------------------------------------------------------------

def test_pytest_node_ids_after_double_dash_and_the_users_paths_dropped() -> None:
    plan = planned(["python3", "-m", "pytest", "-q", "-k", "not slow", "tests/", "--tb", "short"],
                   report("pytest_console", "tests/a.py::test_b[-x]", "tests/a.py::TestC::test_d[a b]",
                          "tests/a.py::test_e [case 3] (i=3)"))
    assert plan.argv == ("python3", "-m", "pytest", "-q", "-k", "not slow", "--tb", "short", "-rA", "--",
                         "tests/a.py::test_b[-x]", "tests/a.py::TestC::test_d[a b]", "tests/a.py::test_e")
    assert plan.tests[2] == "tests/a.py::test_e [case 3] (i=3)"  # the report's name, for people


@pytest.mark.parametrize("name", ["/etc/evil.py::test_x", "../outside.py::test_x", "tests/a.py",
                                  "TestA.test_b", "C:/x.py::test_y", "tests/a.txt::test_x"])
def test_pytest_names_that_are_not_repository_node_ids_are_refused(name: str) -> None:
    assert "pytest" in refused(["pytest"], report("pytest_console", name))


def test_dotnet_filter_escapes_vstest_and_msbuild_characters() -> None:
    plan = planned(["dotnet", "test", "Shop.sln", "--filter", "Category=Unit", "-c", "Release"],
                   report("trx", "Shop.Tests.CartTests.Adds(qty: 2)", "Shop.Tests.Odd.M!x=1|y~z",
                          "Shop.Tests.G<A,B>.M"))
    expr = ("FullyQualifiedName=Shop.Tests.CartTests.Adds|FullyQualifiedName=Shop.Tests.Odd.M\\!x\\=1\\|y\\~z"
            "|FullyQualifiedName=Shop.Tests.G<A%2CB>.M")
    assert plan.argv == ("dotnet", "test", "Shop.sln", "-c", "Release", "--filter", expr,
                         "--logger", "console;verbosity=normal")
    assert vstest_value("a\\b(c)&d;e%f") == "a\\\\b\\(c\\)\\&d%3Be%25f"


def test_go_run_pattern_per_level_and_no_cached_result() -> None:
    plan = planned(["go", "test", "-run", "Test.*", "./..."],
                   report("go_test", "example.com/m.TestA/case_1", "example.com/m.TestA/x.(y)",
                          classname="example.com/m"))
    assert plan.argv == ("go", "test", "-count=1", "-v", "-run", r"^(?:TestA)$/^(?:case_1|x\.\(y\))$",
                         "./...")
    assert plan.selectors == ("TestA/case_1", "TestA/x.(y)")
    # a whole test among them: its level is the last one the pattern names
    whole = planned(["go", "test", "./..."], report("go_test", "m.TestA/sub", "m.TestB", classname="m"))
    assert whole.argv[-2] == "^(?:TestA|TestB)$"


def test_cargo_exact_names_after_the_harness_separator() -> None:
    plan = planned(["cargo", "test", "--workspace", "-p", "core", "parse", "--", "--nocapture", "other"],
                   report("cargo_test", "tests::it_parses", "round_trip"))
    assert plan.argv == ("cargo", "test", "--workspace", "-p", "core", "--", "--nocapture", "--exact",
                         "tests::it_parses", "round_trip")


def test_jest_and_vitest_anchored_escaped_name_pattern() -> None:
    jest = planned(["npx", "jest", "src/", "-t", "old"], report("junit", "cart adds (2+2)", "a.b"))
    assert jest.argv == ("npx", "jest", "src/", "-t", r"^(?:cart adds \(2\+2\)|a\.b)$")
    vitest = planned(["vitest", "run"], report("junit", "x|y"))
    assert vitest.argv == ("vitest", "run", "-t", r"^(?:x\|y)$")
    assert re.fullmatch(vitest.argv[-1], "x|y") and not re.fullmatch(vitest.argv[-1], "x")


def test_node_pattern_first_and_the_users_own_pattern_dropped() -> None:
    plan = planned(["node", "--test-name-pattern=.*", "--test", "t/"],
                   report("node_test", "suite > leaf (1)"))
    assert plan.argv == ("node", r"--test-name-pattern=^(?:leaf \(1\)|suite leaf \(1\))$", "--test", "t/")
    assert plan.selectors == ("leaf (1)",)


@pytest.mark.parametrize("command", [["npm", "test"], ["make", "test"], ["bash", "-c", "pytest"], [],
                                     ["cargo", "nextest", "run"], ["dotnet", "build"], ["node", "t.js"]])
def test_unknown_runners_get_no_rerun_with_a_reason(command: list[str]) -> None:
    assert detect(command) is None
    assert "runner" in refused(command, report("pytest_console", "a.py::test_b"))


def test_failures_another_tool_reported_are_not_rerun_by_this_runner() -> None:
    assert "reported by" in refused(["pytest"], report("junit", "a.py::test_b"))
    assert "reported by" in refused(["go", "test", "./..."], report("pytest_console", "TestA"))


def test_build_errors_run_errors_and_no_failures_get_no_rerun() -> None:
    diag = ReportDiagnostic(Severity.ERROR, "a.go", 1, 1, None, "undefined: x", None, None, True)
    assert "other than tests" in refused(["go", "test"], report("go_test", "m.TestA", diagnostics=(diag,)))
    assert "other than tests" in refused(["pytest"], report("pytest_console", "a.py::t",
                                                            run_errors=(RunError("x", "crash"),)))
    assert "no failed test" in refused(["pytest"], report("pytest_console"))


def test_too_many_failed_tests_get_no_rerun() -> None:
    names = [f"a.py::test_{i}" for i in range(MAX_TESTS + 1)]
    assert f"more than the {MAX_TESTS}" in refused(["pytest"], report("pytest_console", *names))
    assert isinstance(plan_rerun(["pytest"], report("pytest_console", *names[:MAX_TESTS])), RerunPlan)


@pytest.mark.parametrize(("command", "expected"), [
    (["uv", "run", "pytest", "-q"], ("pytest", 3)), (["/usr/bin/python3.12", "-m", "pytest"], ("pytest", 3)),
    (["npx", "vitest", "run"], ("vitest", 3)), (["yarn", "jest", "--ci"], ("jest", 2)),
    (["dotnet", "test", "x.sln"], ("dotnet", 2)), (["node", "--test", "t/"], ("node", 1))])
def test_runners_are_found_behind_common_wrappers(command: list[str], expected: tuple[str, int]) -> None:
    assert detect(command) == expected


def plan_of(framework: str, *selectors: str) -> RerunPlan:
    return RerunPlan(framework, (), selectors, selectors)  # type: ignore[arg-type]


def test_passing_lines_confirm_only_the_tests_they_name() -> None:
    dotnet = "  Passed Shop.Tests.CartTests.Adds(qty: 2) [3 ms]\n  Failed Shop.Tests.Odd.M [1 ms]\n"
    assert unconfirmed(plan_of("dotnet", "Shop.Tests.CartTests.Adds", "Shop.Tests.Odd.M"), dotnet, 1) == (
        "Shop.Tests.Odd.M",)
    cargo = "test tests::flaky ... ok\ntest tests::flaky_not ... FAILED\n"
    assert unconfirmed(plan_of("cargo", "tests::flaky", "tests::flaky_not"), cargo, 1) == (
        "tests::flaky_not",)
    go = "--- PASS: TestA (0.00s)\n    --- SKIP: TestA/x (0.00s)\nok  \tm\t0.1s [no tests to run]\n"
    assert unconfirmed(plan_of("go", "TestA", "TestA/x"), go, 0) == ("TestA/x",)
    pytest_out = "PASSED a.py::t[x y]\nSKIPPED [1] a.py:3: no\n"
    assert unconfirmed(plan_of("pytest", "a.py::t[x y]", "a.py::u"), pytest_out, 1) == ("a.py::u",)
    node = "ok 1 - a # SKIP test name does not match pattern\n✔ b (1.5ms)\n"
    assert unconfirmed(plan_of("node", "a", "b"), node, 1) == ("a",)


def test_jest_and_vitest_are_confirmed_only_by_a_count_covering_every_test() -> None:
    plan = plan_of("jest", "a", "b")
    assert unconfirmed(plan, "✓ a\n✓ b\n", 1) == ("a", "b")
    assert unconfirmed(plan, "", 2) == ()


# --- hostile names ------------------------------------------------------------------------

FRAMEWORKS = [(["pytest"], "pytest_console"), (["dotnet", "test"], "trx"), (["go", "test"], "go_test"),
              (["cargo", "test"], "cargo_test"), (["npx", "jest"], "junit"),
              (["node", "--test"], "node_test")]


@pytest.mark.parametrize(("command", "fmt"), FRAMEWORKS)
@pytest.mark.parametrize("name", ["-rf", "--co", "a.py::t\x00x", "a.py::t\nb", "a.py::t\x1b[2J",
                                  "x" * (MAX_NAME_CHARS + 1), "", "   "])
def test_option_like_control_and_absurd_names_are_refused(command: list[str], fmt: str, name: str) -> None:
    refused(command, report(fmt, name))


@pytest.mark.parametrize(("command", "fmt"), FRAMEWORKS)
@settings(max_examples=60, deadline=None)
@given(names=st.lists(st.text(min_size=1, max_size=60), min_size=1, max_size=4))
def test_no_name_becomes_an_option_or_a_broader_filter(command: list[str], fmt: str,
                                                       names: list[str]) -> None:
    found = plan_rerun(command, report(fmt, *names))
    if isinstance(found, NoRerun):
        return
    added = list(found.argv)
    for token in command:  # the user's own tokens stay (node's pattern goes before `--test`)
        added.remove(token)
    cut = added.index("--") if "--" in added else len(added)
    for arg in added[cut + 1:]:
        assert not arg.startswith("-") or arg == "--exact"
    ours = {"-rA", "--", "--filter", "--logger", "-count=1", "-v", "-run", "-t", "--exact"}
    for arg in added[:cut]:
        assert arg in ours or not arg.startswith("-") or arg.startswith("--test-name-pattern=^(?:")
    if fmt in ("junit", "node_test"):
        pattern = found.argv[-1] if fmt == "junit" else found.argv[1].split("=", 1)[1]
        compiled = re.compile(pattern)  # Python's regex grammar agrees with JS on these escapes
        assert all(compiled.fullmatch(n.split(" > ")[-1]) or compiled.fullmatch(n) for n in names)
        assert not compiled.fullmatch("an unrelated test")  or "an unrelated test" in names


@given(st.text(max_size=40))
def test_go_and_js_quoting_matches_only_the_text_itself(text: str) -> None:
    assert re.fullmatch(go_quote(text), text, re.S)
    assert re.fullmatch(js_quote(text), text, re.S)
    assert not re.fullmatch(js_quote(text), text + "x", re.S)


# --- real runners -------------------------------------------------------------------------

FLAKY_PY = """import pathlib
SEEN = pathlib.Path("SEEN_PATH")
def test_flaky():
    first = not SEEN.exists()
    SEEN.write_text("1")
    assert not first, "fails the first time only"
def test_broken():
    assert 1 == 2
def test_fine():
    pass
"""


def test_pytest_rerun_runs_only_the_failed_tests_and_confirms_the_flaky_one(
        reachable_tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    (reachable_tmp / "test_f.py").write_text(FLAKY_PY.replace("SEEN_PATH", str(reachable_tmp / "seen")))
    (reachable_tmp / "seen").unlink(missing_ok=True)
    reachable_tmp.chmod(0o777)
    command = (PYTHON, "-m", "pytest", "-q", "-p", "no:cacheprovider", ".")
    first = collect(reachable_tmp, command=command, quiet=True)
    plan = planned(command, first.report)
    assert plan.selectors == ("test_f.py::test_flaky", "test_f.py::test_broken")
    again = collect(reachable_tmp, command=plan.argv, quiet=True)
    assert again.command is not None
    assert again.report.counts.total == 2  # test_fine did not run
    assert unconfirmed(plan, again.command.stdout, again.report.counts.passed) == ("test_f.py::test_broken",)
    assert [f.name for f in again.report.failures] == ["test_f.py::test_broken"]


FLAKY_GO = """package flaky

import (
\t"os"
\t"testing"
)

func TestFlaky(t *testing.T) {
\tif _, err := os.Stat("SEEN_PATH"); err != nil {
\t\tos.WriteFile("SEEN_PATH", []byte("1"), 0o666)
\t\tt.Fatal("fails the first time only")
\t}
}

func TestTable(t *testing.T) {
\tt.Run("fine case", func(t *testing.T) {})
\tt.Run("bad.(x)", func(t *testing.T) { t.Fatal("always") })
}

func TestFine(t *testing.T) {}
"""


@pytest.mark.skipif(shutil.which("go") is None, reason="go is not installed on this machine")
def test_go_rerun_runs_only_the_failed_tests(reachable_tmp: Path) -> None:
    (reachable_tmp / "go.mod").write_text("module example.com/flaky\n\ngo 1.19\n")
    (reachable_tmp / "f_test.go").write_text(FLAKY_GO.replace("SEEN_PATH", str(reachable_tmp / "seen")))
    first = collect(reachable_tmp, command=("go", "test", "./..."), quiet=True)
    plan = planned(("go", "test", "./..."), first.report)
    assert plan.selectors == ("TestFlaky", "TestTable/bad.(x)")
    again = collect(reachable_tmp, command=plan.argv, quiet=True)
    assert again.command is not None
    out = again.command.stdout
    assert "TestFine" not in out and "--- PASS: TestFlaky" in out
    assert unconfirmed(plan, out, 0) == ("TestTable/bad.(x)",)


FLAKY_NODE = """const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
test('flaky (x|y)', () => {
  const first = !fs.existsSync('SEEN_PATH');
  fs.writeFileSync('SEEN_PATH', '1');
  assert.ok(!first, 'fails the first time only');
});
test('fine', () => {});
test.describe('group', () => { test('always', () => { assert.fail('always'); }); });
"""


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed on this machine")
def test_node_rerun_skips_the_tests_that_passed_and_confirms_the_flaky_one(reachable_tmp: Path) -> None:
    (reachable_tmp / "f.test.js").write_text(FLAKY_NODE.replace("SEEN_PATH", str(reachable_tmp / "seen")))
    first = collect(reachable_tmp, command=("node", "--test"), quiet=True)
    plan = planned(("node", "--test"), first.report)
    again = collect(reachable_tmp, command=plan.argv, quiet=True)
    assert again.command is not None
    assert unconfirmed(plan, again.command.stdout, 0) == ("always",)
    assert re.search(r"ok \d+ - fine # SKIP", again.command.stdout)  # did not run


CARGO_LIB = """#[cfg(test)]
mod tests {
    #[test]
    fn flaky() {
        let seen = std::path::Path::new("SEEN_PATH");
        let first = !seen.exists();
        std::fs::write(seen, "1").unwrap();
        assert!(!first, "fails the first time only");
    }
    #[test]
    fn fine() {}
    #[test]
    fn flaky_not() { panic!("always"); }
}
"""


@pytest.mark.skipif(shutil.which("cargo") is None, reason="cargo is not installed on this machine")
def test_cargo_rerun_runs_only_the_failed_tests(tmp_path: Path) -> None:
    # Run directly (not in the sandbox): the toolchain lives in the installing user's home.
    (tmp_path / "src").mkdir()
    (tmp_path / "Cargo.toml").write_text('[package]\nname = "flaky"\nversion = "0.1.0"\nedition = "2021"\n')
    (tmp_path / "src" / "lib.rs").write_text(CARGO_LIB.replace("SEEN_PATH", str(tmp_path / "seen")))

    def run(argv: Sequence[str]) -> Path:
        done = subprocess.run(list(argv), cwd=tmp_path, capture_output=True, text=True, timeout=600)
        log = tmp_path / f"run{len(list(tmp_path.glob('run*.log')))}.log"
        log.write_text(done.stdout + done.stderr)
        return log

    first = collect(tmp_path, logs=[str(run(["cargo", "test", "--offline"]))], quiet=True)
    plan = planned(("cargo", "test", "--offline"), first.report)
    assert plan.argv[-3:] == ("--exact", "tests::flaky", "tests::flaky_not")
    again = run(plan.argv)
    out = again.read_text()
    assert "tests::fine" not in out  # --exact: `flaky` does not select `fine`, nor a prefix
    assert unconfirmed(plan, out, 0) == ("tests::flaky_not",)
