"""Verdicts before the model in `fix --local` (issue 16): is this failure ours to fix?

Once the first collect is red, and before any model client is made:

1. Infrastructure (`triage.infrastructure`): `ci_agent.triage.infra.classify` reads the report and
   the logs (the given build logs and the test command's own output). A verdict ends the run:
   status `infrastructure`, exit 1 (an expected failure, DESIGN.md §4.2), no model call.
2. Flaky (`triage.flaky`, and only with a test command): the command filtered to the failed
   tests (`ci_agent.triage.rerun`) runs once more, in the same sandbox and with the same timeout.
   When it shows every one of them passing: status `flaky`, exit 0, no model call, one more
   flaky verdict per test in `GitFlakyLog` (`refs/ci-agent/flaky`), and the tests flaky
   `triage.quarantine_after` times or more named quarantine candidates. When any still fails,
   or the re-run cannot be confirmed, the attempt goes on exactly as before, on the first run's
   report (the re-run's output is never the report). When no re-run can be built (an unknown
   runner, build errors, too many failures) the reason is said and nothing is re-run.

Pre-existing does not apply here: a local run has no default branch's CI run to compare with.
In CI (`Plan.judge_locally` False) nothing happens here: the CI cycle judges before it attempts.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from ci_agent.config import Settings
from ci_agent.engine.collect import Collected, collect, describe
from ci_agent.errors import CiAgentError, ExitCode
from ci_agent.paths import is_absolute
from ci_agent.triage import Verdict
from ci_agent.triage.infra import classify
from ci_agent.triage.rerun import NoRerun, plan_rerun, unconfirmed

Emit = Callable[..., None]
SHOWN_TESTS = 5


@dataclass(frozen=True)
class Triage:
    """What the checks before the model found. `status` is set when a verdict ends the run."""

    verdict: Verdict | None = None
    status: str = ""  # flaky | infrastructure
    exit_code: ExitCode = ExitCode.OK
    message: str = ""
    quarantine: tuple[str, ...] = ()  # tests with quarantine_after flaky verdicts or more
    notes: tuple[str, ...] = ()  # why no flaky check ran, or what the re-run showed


class FlakyLog(Protocol):
    def counts(self) -> dict[str, int]: ...

    def add(self, tests: Sequence[str], head: str) -> dict[str, int]: ...


@dataclass(frozen=True)
class Check:
    """Where the checks run: the plan's command, logs and timeout, in `workdir` at commit `tip`."""

    command: tuple[str, ...]
    logs: tuple[str, ...]
    result_globs: tuple[str, ...]
    timeout_s: float
    workdir: Path
    tip: str
    dry_run: bool


def named(tests: Sequence[str]) -> str:
    shown = ", ".join(tests[:SHOWN_TESTS])
    return shown + (f" and {len(tests) - SHOWN_TESTS} more" if len(tests) > SHOWN_TESTS else "")


def judge(check: Check, settings: Settings, first: Collected, emit: Emit, flaky_log: FlakyLog) -> Triage:
    """The verdict on the red `first` run, or an empty `Triage` (the attempt goes on)."""
    if settings.triage.infrastructure:
        verdict = _infrastructure(check, first)
        if verdict is not None:
            emit("verdict", **verdict.to_json())
            return Triage(verdict, "infrastructure", ExitCode.FAILURE,
                          f"infrastructure: {verdict.reason}; no patch and no model call")
    if settings.triage.flaky and check.command:
        return _flaky(check, settings, first, emit, flaky_log)
    return Triage()


def _infrastructure(check: Check, first: Collected) -> Verdict | None:
    """The classifier reads log files: the test command's output is written to one for it."""
    logs = [Path(p) for p in check.logs]
    with tempfile.TemporaryDirectory(prefix="ci-agent-triage-") as folder:
        if first.command is not None:
            output = Path(folder) / "command-output.log"
            output.write_text(first.command.stdout + "\n" + first.command.stderr, encoding="utf-8",
                              errors="replace")
            logs.append(output)
        return classify(first.report, logs, ())


def _flaky(check: Check, settings: Settings, first: Collected, emit: Emit, flaky_log: FlakyLog) -> Triage:
    plan = plan_rerun(check.command, first.report)
    if isinstance(plan, NoRerun):
        emit("triage", check="flaky", ran=False, reason=plan.reason)
        return Triage(notes=(f"No flaky check: {plan.reason}.",))
    own_results = tuple(glob for glob in check.result_globs if not is_absolute(glob))
    try:
        again = collect(check.workdir, command=plan.argv, timeout_s=check.timeout_s,
                        result_globs=own_results, quiet=True)
    except CiAgentError as exc:
        note = f"No flaky check: the re-run of the failed tests could not start: {exc}."
        emit("triage", check="flaky", ran=False, reason=note)
        return Triage(notes=(note,))
    output = (again.command.stdout + "\n" + again.command.stderr) if again.command else ""
    missing = unconfirmed(plan, output, again.report.counts.passed)
    if again.red or missing:
        how = "still fails" if again.red else "did not show each failed test passing"
        note = (f"Re-ran the {len(plan.tests)} failed test(s) alone once ({describe(plan.argv)}): "
                f"the re-run {how}, so this is not a flaky failure and the attempt goes on.")
        emit("triage", check="flaky", ran=True, flaky=False, command=describe(plan.argv),
             tests=list(plan.tests), unconfirmed=list(missing))
        return Triage(notes=(note,))
    counts = flaky_log.counts() if check.dry_run else flaky_log.add(plan.tests, check.tip)
    threshold = max(1, settings.triage.quarantine_after)
    quarantine = tuple(t for t in plan.tests if counts.get(t, 0) >= threshold)
    verdict = Verdict("flaky", f"{len(plan.tests)} failed test(s) passed when re-run alone",
                      (describe(plan.argv),), plan.tests)
    emit("verdict", **verdict.to_json(), quarantine=list(quarantine))
    message = f"flaky: {named(plan.tests)} failed, then passed when re-run alone; no patch"
    if quarantine:
        message += (f". Quarantine candidate(s), flaky {threshold} times or more: {named(quarantine)}")
    return Triage(verdict, "flaky", ExitCode.OK, message, quarantine)
