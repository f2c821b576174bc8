"""`--output codequality`: GitLab Code Quality report (a JSON array of issues).

Severity mapping (GitLab knows blocker, critical, major, minor, info):
    error -> critical   (it fails the build, but is one finding among possibly many)
    warning -> minor
    info -> info
`fingerprint` is the SHA-256 of the unique key (DESIGN.md §4.1), so it is stable across runs
and identical for the same finding in two pipelines, which is how GitLab diffs reports.
`location.path` is the repo-relative file. A diagnostic without an in-repo file is still
reported (GitLab shows it in the widget, without a source link) at the best path we have: its
in-repo project (line 1), else the path or tool origin as printed; `lines.begin` is 1 when
unknown.
Failed tests are not code-quality findings; they go to `--output junit`.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from ci_agent.distill import report_key
from ci_agent.paths import is_absolute
from ci_agent.report import Report, ReportDiagnostic, Severity

SEVERITY = {Severity.ERROR: "critical", Severity.WARNING: "minor", Severity.INFO: "info"}


def fingerprint(diag: ReportDiagnostic) -> str:
    key = json.dumps(list(report_key(diag)), ensure_ascii=False)
    return hashlib.sha256(key.encode("utf-8", errors="surrogatepass")).hexdigest()


def best_path(diag: ReportDiagnostic) -> str:
    if diag.file and diag.in_repo:
        return diag.file
    if diag.project and not is_absolute(diag.project):
        return diag.project
    return diag.file or diag.project or diag.origin or "(build)"


def issue(diag: ReportDiagnostic) -> dict[str, Any]:
    code = diag.code or diag.origin or diag.severity.value
    description = f"{diag.code}: {diag.message}" if diag.code else diag.message
    return {
        "description": description,
        "check_name": code,
        "fingerprint": fingerprint(diag),
        "severity": SEVERITY.get(diag.severity, "info"),
        "location": {"path": best_path(diag), "lines": {"begin": _begin(diag)}},
    }


def _begin(diag: ReportDiagnostic) -> int:
    """The line in `best_path`: the diagnostic's own line only when the path is its own file."""
    if best_path(diag) != diag.file:
        return 1
    return diag.line if diag.line and diag.line > 0 else 1


def render_codequality(report: Report) -> str:
    return json.dumps([issue(d) for d in report.diagnostics], ensure_ascii=False, indent=2) + "\n"
