"""`--output github`: GitHub Actions workflow commands (annotations).

GitHub shows at most 10 annotations of each type (error, warning, notice) per step, so we emit
at most that many, most important first, and end with one `::notice::` saying how many were
not annotated. Every value is escaped the way the Actions toolkit does (`%`, CR, LF in the
message; also `:` and `,` in properties), so a hostile log line such as `::set-env ...` or a
message with newlines can never start a workflow command of its own: every output line is
one of ours.
"""

from __future__ import annotations

import re

from ci_agent.paths import is_absolute
from ci_agent.render.budget import shorten
from ci_agent.render.text import location
from ci_agent.report import Report, ReportDiagnostic, ReportFailure, Severity

MAX_PER_TYPE = 10
MESSAGE_CHARS = 4000
_FRAMES = 5
# Line separators the runner might honour besides CR/LF, and other controls: never emitted raw.
_CONTROL_RE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u2028\u2029]")


def escape_data(text: str) -> str:
    text = _CONTROL_RE.sub(" ", text)
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(kind: str, message: str, **props: str | int | None) -> str:
    parts = [f"{name}={escape_property(str(value))}" for name, value in props.items() if value is not None]
    head = f"::{kind} {','.join(parts)}" if parts else f"::{kind}"
    return f"{head}::{escape_data(message)}"


def _diagnostic_command(diag: ReportDiagnostic) -> str:
    kind = {Severity.ERROR: "error", Severity.WARNING: "warning"}.get(diag.severity, "notice")
    message = shorten(diag.message, MESSAGE_CHARS)
    if diag.detail:
        message += "\n" + shorten(diag.detail, MESSAGE_CHARS)
    if diag.count > 1:
        message += f"\n(printed {diag.count} times)"
    title = " ".join(p for p in (diag.severity.value, diag.code) if p)
    if diag.in_repo and diag.file:
        return command(kind, message, file=diag.file, line=diag.line, col=diag.column, title=title)
    # Outside the repo (SDK targets, NuGet cache) GitHub cannot link that file: say where in the
    # message, and pin the annotation to the in-repo project file when there is one.
    where = location(diag) + (f" [{diag.project}]" if diag.project else "")
    project = diag.project if diag.project and not is_absolute(diag.project) else None
    return command(kind, f"{where}: {message}", file=project, title=title)


def _failure_command(failure: ReportFailure) -> str:
    body = [shorten(failure.message or "(no message)", MESSAGE_CHARS)]
    body.extend(failure.frames[:_FRAMES])
    if len(failure.frames) > _FRAMES:
        body.append(f"... {len(failure.frames) - _FRAMES} more project frames")
    title = f"Test {failure.outcome.value}: {failure.name}"
    file = failure.file if failure.file and not is_absolute(failure.file) else None
    return command("error", "\n".join(body), file=file, line=failure.line if file else None, title=title)


def render_github(report: Report) -> str:
    errors = [command("error", f"{e.source}: {e.message}", title="ci-agent: run error")
              for e in report.run_errors]
    errors += [_diagnostic_command(d) for d in report.diagnostics if d.severity is Severity.ERROR]
    errors += [_failure_command(f) for f in report.failures]
    warnings = [_diagnostic_command(d) for d in report.diagnostics if d.severity is Severity.WARNING]
    notices = [_diagnostic_command(d) for d in report.diagnostics if d.severity is Severity.INFO]
    skipped = {
        "errors": max(0, len(errors) - MAX_PER_TYPE),
        "warnings": max(0, len(warnings) - MAX_PER_TYPE),
    }
    # The closing notice is itself a notice, so it takes one of the ten notice slots.
    summarise = any(skipped.values()) or len(notices) > MAX_PER_TYPE
    notice_slots = MAX_PER_TYPE - 1 if summarise else MAX_PER_TYPE
    skipped["notices"] = max(0, len(notices) - notice_slots)
    lines = errors[:MAX_PER_TYPE] + warnings[:MAX_PER_TYPE] + notices[:notice_slots]
    if any(skipped.values()):
        counts = ", ".join(f"{n} {kind}" for kind, n in skipped.items() if n)
        lines.append(command(
            "notice",
            f"{counts} not annotated (GitHub shows at most {MAX_PER_TYPE} annotations of each type "
            "per step); "
            "the job summary and the JSON report list them all.",
            title="ci-agent: more findings",
        ))
    return "".join(line + "\n" for line in lines)
