"""The "infrastructure" verdict: a failure the environment caused gets no patch and no model call.

The rule (tests/triage/test_infra.py proves each branch):

1. Signals. An infrastructure signal is one of
   - the failed jobs' own outcomes, when every failed job has one: GitHub's conclusion
     `cancelled` or `timed_out`; GitLab's status `canceled` or a `failure_reason` of the runner or
     the platform (`INFRA_FAILURE_REASONS`). A job that just failed beside them voids them (a
     fail-fast matrix cancels the siblings of the job that failed);
   - a line of a log in the wording of a feed, registry, resolver, the kernel, a runtime or a
     runner (`infra_signals.SIGNALS`: NuGet NU1301 "Unable to load the service index", npm
     ECONNRESET/EAI_AGAIN, pip's connection retries, "Could not resolve host", "No space left on
     device", a process "Killed" / exit 137, "JavaScript heap out of memory", "The operation was
     canceled.", "lost communication with the server", Docker Hub "toomanyrequests", ...);
   - a failed test or error diagnostic whose own message is such a signal (below).
2. Nothing unexplained. Each item of the report is checked:
   - an error diagnostic is explained when its message is a signal, or a consequence of one
     ("Unable to find package", "No matching distribution found", MSB3073 "exited with code")
     while a signal is present; otherwise it is a code failure when it points at a file, unless
     that file is a toolchain's (an SDK's targets, a package cache, node_modules) — an absolute
     path that could not be placed in the repository counts as code (in doubt). A diagnostic in
     no file is a tool's complaint (`npm error code ECONNREFUSED`), not a code failure;
   - a failed test is explained only when its own message is a signal (a test that failed because
     the network was down); a test that failed with anything else is a code failure, even if the
     log around it says "Could not resolve host" (the test may call the network: its problem);
   - failed tests counted but not listed are code failures (nothing says why they failed);
   - a run error (a crashed or aborted test run) is explained by its own signal, or by a resource
     signal (memory, disk, cancelled, timeout, runner) elsewhere; the reader's own notes about an
     input (empty, binary, an unknown format) are neither;
   - warnings and log tails are never code failures.
3. A verdict only when there is a signal AND no code failure. When in doubt: no verdict (None),
   and the model is asked.

Evidence: at most `MAX_EVIDENCE` lines (job facts first, then log lines), each cut, as untrusted
text. Logs are read with a byte cap each (`infra_scan.MAX_SCAN_BYTES`), so time is bounded.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ci_agent.paths import is_toolchain_path, is_vendored_path
from ci_agent.report import Report, ReportDiagnostic, ReportFailure, RunError, Severity
from ci_agent.triage import Verdict
from ci_agent.triage.infra_scan import EVIDENCE_CHARS, Hit, evidence_text, scan_log
from ci_agent.triage.infra_signals import (
    CATEGORY_ORDER,
    CATEGORY_REASONS,
    RESOURCE_CATEGORIES,
    Category,
    is_consequence,
    match_signal,
    message_signal,
)

MAX_EVIDENCE = 3

# GitLab `failure_reason`s that say the runner or the platform failed, not the job's script
# (GitLab's `retry:when` values; `script_failure`, `unknown_failure` and the rest are not ours).
INFRA_FAILURE_REASONS: dict[str, Category] = {
    "runner_system_failure": "runner",
    "runner_unsupported": "runner",
    "scheduler_failure": "runner",
    "api_failure": "runner",
    "data_integrity_failure": "runner",
    "archived_failure": "runner",
    "stale_schedule": "runner",
    "unmet_prerequisites": "runner",
    "stuck_or_timeout_failure": "timeout",
    "job_execution_timeout": "timeout",
}
# GitHub job conclusions and GitLab job statuses that are not a failure of the job's steps.
INFRA_CONCLUSIONS: dict[str, Category] = {
    "cancelled": "cancelled",  # GitHub
    "canceled": "cancelled",  # GitLab
    "timed_out": "timeout",  # GitHub
}
# What the input reader says about a file it could not read (ci_agent.parsers): not the build's word.
_READER_NOTES = ("the file is empty", "the file is binary", "not a format ci-agent reads", "XML root element")


@dataclass(frozen=True, slots=True)
class JobOutcome:
    """What the forge says about a failed job (triage is layer 3: no engine import)."""

    name: str
    conclusion: str  # GitHub job conclusion ("failure", "cancelled", "timed_out", ...); GitLab job status
    failure_reason: str = ""  # GitLab's `failure_reason` (runner_system_failure, ...)


def classify(report: Report, logs: Sequence[Path], jobs: Sequence[JobOutcome] = ()) -> Verdict | None:
    """An "infrastructure" verdict when the environment explains every failure, else None."""
    hits = [*job_hits(jobs), *[hit for log in logs for hit in scan_log(log)], *message_hits(report)]
    if not hits:
        return None
    categories = {hit.category for hit in hits}
    if has_code_failure(report, categories):
        return None
    return _verdict(hits, categories)


def job_hits(jobs: Sequence[JobOutcome]) -> list[Hit]:
    """The jobs' outcomes when each says the environment stopped it. One job that simply failed
    makes them say nothing: a fail-fast matrix cancels its siblings because one job failed, and a
    cancelled sibling does not explain that failure (its log still may)."""
    hits = []
    for job in jobs:
        reason = job.failure_reason.strip().lower()
        conclusion = job.conclusion.strip().lower()
        if reason in INFRA_FAILURE_REASONS:
            hits.append(Hit(INFRA_FAILURE_REASONS[reason], evidence_text(
                f"job {job.name!r}: failure reason {reason}"), "forge"))
        elif conclusion in INFRA_CONCLUSIONS:
            hits.append(Hit(INFRA_CONCLUSIONS[conclusion], evidence_text(
                f"job {job.name!r}: {conclusion}"), "forge"))
        else:
            return []
    return hits


def message_hits(report: Report) -> list[Hit]:
    """Signals in the report's own items (a Go build's `main.go:3:8: ... dial tcp ...`) and in
    the last lines it kept of a log nothing could read (`pip install` read from stdin)."""
    hits = []
    for tail in report.log_tails:
        for line in tail.lines:
            matched = match_signal(line.strip())
            if matched is not None:
                signal, where = matched
                hits.append(Hit(signal.category, evidence_text(where.string, where.start()),
                                Path(tail.source).name))
    for diag in report.diagnostics:
        if diag.severity is Severity.ERROR:
            found = message_signal(_diagnostic_text(diag))
            if found is not None:
                hits.append(Hit(found[0].category, evidence_text(found[1]), diag.file or "build"))
    for failure in report.failures:
        found = message_signal(failure.message or "")
        if found is not None:
            hits.append(Hit(found[0].category, evidence_text(found[1]), failure.name))
    return hits


def has_code_failure(report: Report, categories: set[Category]) -> bool:
    """True when some item of the report is a failure the signals seen do not explain."""
    if any(_unexplained_diagnostic(diag) for diag in report.diagnostics):
        return True
    if any(_unexplained_failure(failure) for failure in report.failures):
        return True
    if report.counts.failed and not report.failures:
        return True
    return any(_unexplained_run_error(error, categories) for error in report.run_errors)


def _unexplained_diagnostic(diag: ReportDiagnostic) -> bool:
    if diag.severity is not Severity.ERROR:
        return False
    text = _diagnostic_text(diag)
    if message_signal(text) is not None or is_consequence(text):
        return False  # a consequence counts only with a signal, and classify has one by now
    if diag.file is None:
        # A tool's own complaint (`npm error code: 'ECONNREFUSED'`, `error: failed to get `itoa``):
        # the code is wrong when a compiler or linter points at a file.
        return False
    # A toolchain's own file (an SDK's .targets, a package cache, node_modules) is not the code;
    # an absolute path we could not place in the repository is still taken as code (in doubt).
    return diag.in_repo or not (is_toolchain_path(diag.file) or is_vendored_path(diag.file))


def _unexplained_failure(failure: ReportFailure) -> bool:
    return message_signal(failure.message or "") is None


def _unexplained_run_error(error: RunError, categories: set[Category]) -> bool:
    if error.message.startswith(_READER_NOTES) or message_signal(error.message) is not None:
        return False
    return not categories & RESOURCE_CATEGORIES


def _diagnostic_text(diag: ReportDiagnostic) -> str:
    text = f"{diag.code}: {diag.message}" if diag.code else diag.message
    return f"{text}\n{diag.detail}" if diag.detail else text


def _verdict(hits: list[Hit], categories: set[Category]) -> Verdict:
    main = next(category for category in CATEGORY_ORDER if category in categories)
    others = [category for category in CATEGORY_ORDER if category in categories and category != main]
    reason = f"Not a code failure: {CATEGORY_REASONS[main]}"
    if others:
        reason += f" (also: {'; '.join(CATEGORY_REASONS[c] for c in others)})"
    evidence: list[str] = []
    for hit in sorted(hits, key=lambda h: CATEGORY_ORDER.index(h.category)):
        line = hit.line if hit.source == "forge" else _with_source(hit)
        if line not in evidence:
            evidence.append(line)
        if len(evidence) >= MAX_EVIDENCE:
            break
    return Verdict("infrastructure", reason + ".", tuple(evidence))


def _with_source(hit: Hit) -> str:
    """`source: line`, the source name cut first so that the signal stays in view."""
    source = hit.source if len(hit.source) <= _SOURCE_CHARS else "…" + hit.source[-_SOURCE_CHARS + 1:]
    text = f"{evidence_text(source)}: {hit.line}"
    return text if len(text) <= EVIDENCE_CHARS else text[:EVIDENCE_CHARS - 1] + "…"


_SOURCE_CHARS = 60
