r"""The re-run of only the failed tests, per framework (issue 16: flaky is not broken).

`plan_rerun(test_command, report)` takes the test command the user configured (`commands.test`,
an argv, never a shell line) and the distilled report, and gives the argv that runs ONLY the
report's failed tests once more — or `NoRerun` with the reason (`rerun_command` is the same
without the reason). `unconfirmed(plan, output, passed)` then says which of them the re-run's
output does not show passing: a re-run counts as "they pass now" only when each one is seen
passing, so a filter that matched nothing never reads as flaky.

- pytest (`pytest`, `python -m pytest`; `pytest_console` failures): `-rA -- tests/a.py::test_b[x]`
  (node ids after `--`, so none reads as an option);
- dotnet test (`dotnet_test`/`trx` failures): `--filter "FullyQualifiedName=A|FullyQualifiedName=B"`
  (VSTest's escapes; a data row re-runs its method);
- go test (`go_test`): `-count=1 -v -run '^(?:TestA)$/^(?:sub)$'` (a pattern per `/` level, no cache);
- cargo test (`cargo_test`): `-- --exact a::b c`;
- jest, vitest (`junit` failures, from their JUnit reporters): `-t '^(?:full name)$'`;
- node --test (`node_test`): `--test-name-pattern=^(?:name)$`.

Anything else — another runner, a wrapper like `npm test` or `make test` whose runner we cannot
see, a report whose failures another tool wrote, build errors, more than `MAX_TESTS` failures —
is `NoRerun`: no flaky check, never a silent re-run of the whole suite. The user's own filters
of the same kind (`-run`, `--filter`, `-t`, positional test paths of pytest and cargo) are
replaced by ours, which names a subset of what they selected.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from ci_agent.report import Report, Severity
from ci_agent.triage import rerun_filters as rf
from ci_agent.triage.rerun_filters import Unsafe

Framework = Literal["pytest", "dotnet", "go", "cargo", "jest", "vitest", "node"]
MAX_TESTS = 200

# The parser formats whose failures each framework's re-run can speak for.
FORMATS: dict[str, frozenset[str]] = {
    "pytest": frozenset({"pytest_console"}), "dotnet": frozenset({"dotnet_test", "trx"}),
    "go": frozenset({"go_test"}), "cargo": frozenset({"cargo_test"}), "jest": frozenset({"junit"}),
    "vitest": frozenset({"junit"}), "node": frozenset({"node_test"}),
}


@dataclass(frozen=True, slots=True)
class RerunPlan:
    framework: Framework
    argv: tuple[str, ...]
    tests: tuple[str, ...]  # the failed tests as the report names them
    selectors: tuple[str, ...]  # what the re-run must show passing (node ids, methods, names)


@dataclass(frozen=True, slots=True)
class NoRerun:
    reason: str


def rerun_command(test_command: Sequence[str], report: Report) -> RerunPlan | None:
    found = plan_rerun(test_command, report)
    return found if isinstance(found, RerunPlan) else None


# Wrappers that run the program named after them (`uv run pytest`, `npx jest`).
_WRAPPERS: tuple[tuple[str, ...], ...] = (("uv", "run"), ("poetry", "run"), ("pipenv", "run"),
                                          ("hatch", "run"), ("pnpm", "exec"), ("npx",), ("yarn",))
_PYTHON = re.compile(r"python(?:\d+(?:\.\d+)?)?(?:\.exe)?|py")


def _program(token: str) -> str:
    return os.path.basename(token).removesuffix(".exe").removesuffix(".cmd")


def detect(argv: Sequence[str]) -> tuple[Framework, int] | None:
    """The framework of `argv` and where its own arguments start (after `pytest`, `go test`, ...)."""
    i = 0
    for wrapper in _WRAPPERS:
        if tuple(_program(t) if k == 0 else t for k, t in enumerate(argv[:len(wrapper)])) == wrapper:
            i = len(wrapper)
            break
    rest = list(argv[i:])
    if not rest:
        return None
    first = _program(rest[0])
    second = rest[1] if len(rest) > 1 else ""
    if first in ("pytest", "py.test"):
        return "pytest", i + 1
    if _PYTHON.fullmatch(first) and rest[1:3] == ["-m", "pytest"]:
        return "pytest", i + 3
    pairs: dict[tuple[str, str], Framework] = {("dotnet", "test"): "dotnet", ("go", "test"): "go",
                                               ("cargo", "test"): "cargo", ("vitest", "run"): "vitest"}
    if (first, second) in pairs:
        return pairs[(first, second)], i + 2
    if first in ("jest", "vitest"):
        return ("jest" if first == "jest" else "vitest"), i + 1
    if first == "node" and "--test" in rest[1:]:
        return "node", i + 1
    return None


def plan_rerun(test_command: Sequence[str], report: Report) -> RerunPlan | NoRerun:
    found = detect(test_command)
    if found is None:
        return NoRerun("the test command's runner is not one whose failed tests can be re-run alone "
                       "(pytest, dotnet test, go test, cargo test, jest, vitest, node --test)")
    framework, start = found
    if not report.failures:
        return NoRerun("no failed test to re-run")
    if report.run_errors or any(d.severity is Severity.ERROR for d in report.diagnostics):
        return NoRerun("something other than tests failed (a build error or a failed run)")
    failures = list(dict.fromkeys(f.name for f in report.failures))
    if len(failures) > MAX_TESTS:
        return NoRerun(f"{len(failures)} tests failed, more than the {MAX_TESTS} a re-run names")
    formats = _formats(report)
    for failure in report.failures:
        if not formats.get(failure.source or "", frozenset()) & FORMATS[framework]:
            return NoRerun(f"the failed tests were not all reported by {framework}'s output or results")
    head, own = list(test_command[:start]), list(test_command[start:])
    try:
        argv, selectors = _BUILDERS[framework](head, own, report)
    except Unsafe as exc:
        return NoRerun(str(exc))
    return RerunPlan(framework, tuple(argv), tuple(failures), tuple(dict.fromkeys(selectors)))


def _formats(report: Report) -> dict[str, frozenset[str]]:
    return {s.path: frozenset(s.format.split("+")) for s in report.sources}


Built = tuple[list[str], list[str]]


def _without(args: list[str], options: frozenset[str]) -> list[str]:
    """`args` less every `--opt value` / `--opt=value` of `options`."""
    out: list[str] = []
    skip = False
    for arg in args:
        if skip:
            skip = False
            continue
        if arg in options:
            skip = True
            continue
        if arg.split("=", 1)[0] in options and "=" in arg:
            continue
        out.append(arg)
    return out


def _options_only(args: list[str], takes_value: frozenset[str]) -> list[str]:
    """`args` less its positional arguments (test paths, name filters): options and their values
    stay. Everything after a `--` is positional."""
    out: list[str] = []
    expect_value = False
    for arg in args:
        if expect_value:
            out.append(arg)
            expect_value = False
        elif arg == "--":
            break
        elif arg.startswith("-"):
            out.append(arg)
            expect_value = arg in takes_value
    return out


_PYTEST_VALUE = frozenset({"-k", "-m", "-p", "-c", "-o", "-W", "-r", "-n", "--rootdir", "--confcutdir",
                           "--basetemp", "--junitxml", "--junit-xml", "--junit-prefix", "--log-level",
                           "--log-file", "--log-cli-level", "--cov", "--cov-report", "--cov-config",
                           "--ignore", "--ignore-glob", "--deselect", "--durations", "--maxfail", "--tb",
                           "--import-mode", "--override-ini", "--capture", "--dist", "--timeout",
                           "--color", "--html", "--config-file", "--pyargs"})


def _pytest(head: list[str], own: list[str], report: Report) -> Built:
    nodes = [rf.pytest_node(f.name) for f in report.failures]
    return [*head, *_options_only(own, _PYTEST_VALUE), "-rA", "--", *dict.fromkeys(nodes)], nodes


def _dotnet(head: list[str], own: list[str], report: Report) -> Built:
    methods = list(dict.fromkeys(rf.dotnet_method(f.name) for f in report.failures))
    kept = _without(own, frozenset({"--filter"}))
    return [*head, *kept, "--filter", rf.check_filter(rf.dotnet_filter(methods)),
            "--logger", "console;verbosity=normal"], methods


def _go(head: list[str], own: list[str], report: Report) -> Built:
    levels = [rf.go_levels(f.name, f.classname) for f in report.failures]
    pattern = rf.check_filter(rf.go_run_pattern(levels))
    kept = _without(own, frozenset({"-run", "--run", "-test.run"}))
    return [*head, "-count=1", "-v", "-run", pattern, *kept], ["/".join(x) for x in levels]


_CARGO_VALUE = frozenset({"-p", "--package", "--test", "--bench", "--bin", "--example", "-F", "--features",
                          "--target", "--target-dir", "--manifest-path", "-j", "--jobs", "--profile",
                          "--color", "--config", "-Z", "--message-format", "--exclude"})
_LIBTEST_VALUE = frozenset({"--test-threads", "--skip", "--color", "--format", "--logfile", "-Z",
                            "--shuffle-seed"})


def _cargo(head: list[str], own: list[str], report: Report) -> Built:
    names = list(dict.fromkeys(rf.cargo_name(f.name) for f in report.failures))
    rf.check_filter(" ".join(names))
    cut = own.index("--") if "--" in own else len(own)
    harness = [a for a in _options_only(own[cut + 1:], _LIBTEST_VALUE) if a != "--exact"]
    return [*head, *_options_only(own[:cut], _CARGO_VALUE), "--", *harness, "--exact", *names], names


def _js(head: list[str], own: list[str], report: Report) -> Built:
    names = list(dict.fromkeys(f.name for f in report.failures))
    pattern = rf.check_filter(rf.js_name_pattern(names))
    return [*head, *_without(own, frozenset({"-t", "--testNamePattern", "--testnamepattern"})),
            "-t", pattern], names


def _node(head: list[str], own: list[str], report: Report) -> Built:
    """A nested test is `group > inner` in the report. node 20 matches the pattern against a test's
    own name, later versions against its ancestors' and its own joined by spaces: both forms are
    in the pattern. The re-run shows a nested test passing under its own name (`ok 1 - inner`)."""
    names = list(dict.fromkeys(f.name for f in report.failures))
    leaves = [name.split(" > ")[-1] for name in names]
    forms = [*leaves, *(" ".join(name.split(" > ")) for name in names if " > " in name)]
    pattern = rf.check_filter(rf.js_name_pattern(forms))
    # node ORs several --test-name-pattern: the user's own one is dropped, ours goes first.
    return [*head, f"--test-name-pattern={pattern}",
            *_without(own, frozenset({"--test-name-pattern"}))], leaves


_BUILDERS = {"pytest": _pytest, "dotnet": _dotnet, "go": _go, "cargo": _cargo, "jest": _js, "vitest": _js,
             "node": _node}

# What each runner prints for a test that passed (the re-run's own output, read as untrusted text).
_PASSED_LINES: dict[str, re.Pattern[str]] = {
    "pytest": re.compile(r"^PASSED (?P<name>\S.*?)\s*$", re.M),
    "go": re.compile(r"--- PASS: (?P<name>\S+) \(", re.M),
    "cargo": re.compile(r"^test (?P<name>\S+) \.\.\. ok\s*$", re.M),
    # TAP: `ok 2 - other # SKIP test name does not match pattern` is a skip, not a pass.
    "node": re.compile(r"^\s*(?:✔ (?P<spec>.+?) \(\d[\d.]*m?s\)"
                       r"|ok \d+ - (?P<tap>(?:(?! # (?i:skip|todo)).)+?))\s*$", re.M),
    "dotnet": re.compile(r"^\s*Passed (?P<name>[^\s(\[]+)", re.M),
}


def unconfirmed(plan: RerunPlan, output: str, passed: int) -> tuple[str, ...]:
    """The selectors of `plan` the re-run's `output` does not show passing. jest and vitest print
    no line we can tie to a full name: there the re-run's parsed count of passed tests (`passed`,
    from its JUnit files) must cover them all, else none is confirmed."""
    pattern = _PASSED_LINES.get(plan.framework)
    if pattern is None:
        return () if passed >= len(plan.selectors) else plan.selectors
    seen = set()
    for match in pattern.finditer(output):
        seen.add(next(v for v in match.groupdict().values() if v is not None))
    return tuple(s for s in plan.selectors if s not in seen)
