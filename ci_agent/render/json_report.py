"""`--output json`: the stable report of DESIGN.md §4.1 (schema `ci-agent/report@1`).

Nothing is dropped here: every unique diagnostic, every failed test with all its project
frames and its full message, and every cluster of failures by cause (ci_agent/cluster.py) with
all its members, as indices into `tests.failures`. Keys and types are exactly those of the contract and of
`ci_agent/schemas/report-v1.json`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ci_agent.cluster import cluster_failures
from ci_agent.report import Report

SCHEMA_ID = "ci-agent/report@1"


def report_dict(report: Report, llm_bytes: int, verdict: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """`verdict` (a triage `Verdict.to_json()`) becomes the `verdict` key, only when there is one:
    reports without a verdict keep exactly the keys they always had."""
    data = with_log_tails(report, {
        "schema": SCHEMA_ID,
        "sources": [{"path": s.path, "format": s.format, "bytes": s.bytes} for s in report.sources],
        "diagnostics": [
            {
                "severity": d.severity.value,
                "file": d.file,
                "line": d.line,
                "column": d.column,
                "code": d.code,
                "message": d.message,
                "project": d.project,
                "origin": d.origin,
                "in_repo": d.in_repo,
            }
            for d in report.diagnostics
        ],
        "tests": {
            "total": report.counts.total,
            "passed": report.counts.passed,
            "failed": report.counts.failed,
            "skipped": report.counts.skipped,
            "failures": [
                {
                    "name": f.name,
                    "outcome": f.outcome.value,
                    "message": f.message,
                    "frames": list(f.frames),
                    "file": f.file,
                    "line": f.line,
                }
                for f in report.failures
            ],
            "clusters": [
                {
                    "id": c.id,
                    "outcome": c.key.outcome,
                    "message": c.key.message,
                    "frame": c.key.frame,
                    "count": c.size,
                    "members": list(c.indices),
                }
                for c in cluster_failures(report.failures)
            ],
        },
        "run_errors": [{"source": e.source, "message": e.message} for e in report.run_errors],
        "stats": {
            "input_bytes": report.input_bytes,
            "printed_diagnostics": report.printed_diagnostics,
            "unique_diagnostics": len(report.diagnostics),
            "llm_bytes": llm_bytes,
        },
    })
    if verdict is not None:
        data["verdict"] = dict(verdict)
    return data


def with_log_tails(report: Report, data: dict[str, Any]) -> dict[str, Any]:
    """`log_tails` only when a log told nothing else: reports of readable logs keep their keys."""
    if report.log_tails:
        data["log_tails"] = [{"source": t.source, "lines": list(t.lines)} for t in report.log_tails]
    return data


def render_json(report: Report, llm_bytes: int, verdict: Mapping[str, Any] | None = None) -> str:
    return json.dumps(report_dict(report, llm_bytes, verdict), ensure_ascii=False, indent=2) + "\n"
