"""fixbench's totals and Markdown tables (from run.py's rows; no I/O)."""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Sequence
from typing import Any

Row = dict[str, Any]


def _recall_text(row: Row) -> str:
    if "error" in row:
        return "error"
    if row.get("recall") is None:
        return "n/a"
    return f"{row['recall']:.0%} ({row['shown']}/{row['targets']})"


def _yes(flag: object) -> str:
    return "yes" if flag else "**no**"


def progress_line(row: Row) -> str:
    if "error" in row:
        return f"{row['id']}: {row['error']}"
    line = f"{row['id']}: {row['request_bytes']} bytes, recall {_recall_text(row)}"
    live = row.get("live")
    if live:
        line += f", live: fixed={live['fixed']} attempts={live['attempts']} {live['wall_s']} s"
    return line


def _group_totals(rows: Sequence[Row]) -> dict[str, Any]:
    done = [row for row in rows if "error" not in row]
    targets = sum(row["targets"] for row in done)
    shown = sum(row["shown"] for row in done)
    recalls = [row["recall"] for row in done if row.get("recall") is not None]
    total: dict[str, Any] = {
        "cases": len(rows), "errors": len(rows) - len(done),
        "mean_request_bytes": round(statistics.fmean(r["request_bytes"] for r in done)) if done else None,
        "mean_tokens_est": round(statistics.fmean(r["tokens_est"] for r in done)) if done else None,
        "targets": targets, "shown": shown,
        "recall": round(shown / targets, 4) if targets else None,  # over all changed lines
        "mean_case_recall": round(statistics.fmean(recalls), 4) if recalls else None,
        "fix_files_shown": sum(1 for row in done if row["fix_files_shown"]),
        "fix_files_excerpted": sum(1 for row in done if row["fix_files_excerpted"]),
    }
    lives = [row["live"] for row in done if row.get("live")]
    if lives:
        costs = [live["cost_usd"] for live in lives]
        total["live"] = {
            "fixed": sum(1 for live in lives if live["fixed"]), "runs": len(lives),
            "fix_rate": round(sum(1 for live in lives if live["fixed"]) / len(lives), 4),
            "mean_attempts": round(statistics.fmean(live["attempts"] for live in lives), 2),
            "input_tokens": sum(live["input_tokens"] for live in lives),
            "output_tokens": sum(live["output_tokens"] for live in lives),
            "cost_usd": round(sum(costs), 4) if None not in costs else None,
            "wall_s": round(sum(live["wall_s"] for live in lives), 1),
        }
    return total


def _mean(values: Iterable[int]) -> int | None:
    items = list(values)
    return round(statistics.fmean(items)) if items else None


def totals(rows: Sequence[Row], report_only: Sequence[Row]) -> dict[str, Any]:
    """Per ecosystem, over every case ("total") and for the report-only logs."""
    result: dict[str, Any] = {}
    for ecosystem in sorted({row["ecosystem"] for row in rows}):
        result[ecosystem] = _group_totals([row for row in rows if row["ecosystem"] == ecosystem])
    result["total"] = _group_totals(rows)
    measured = [row for row in report_only if "request_bytes" in row]
    if report_only:
        result["report_only"] = {
            "logs": len(report_only), "measured": len(measured),
            "errors": sum(1 for row in report_only if "error" in row),
            "mean_request_bytes": _mean(r["request_bytes"] for r in measured),
            "mean_tokens_est": _mean(r["tokens_est"] for r in measured),
        }
    return result


def _baseline_recall(baseline: dict[str, Any] | None) -> dict[str, Row]:
    return {row["id"]: row for row in (baseline or {}).get("cases", [])}


def _case_table(result: dict[str, Any], baseline: dict[str, Any] | None) -> list[str]:
    before = _baseline_recall(baseline)
    live = any(row.get("live") for row in result["cases"])
    head = ["case", "breakage", "request bytes", "tokens (est.)", "context recall"]
    if baseline:
        head += [f"bytes ({baseline['label']})", f"recall ({baseline['label']})"]
    head += ["fix files shown", "fix files excerpted"]
    if baseline:
        head.append(f"excerpted ({baseline['label']})")
    if live:
        head += ["fixed", "attempts", "tokens in/out", "cost USD", "wall s"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in result["cases"]:
        if "error" in row:
            lines.append(f"| {row['id']} | {row['breakage']} | {row['error'][:80]} |")
            continue
        cells = [row["id"], row["breakage"], str(row["request_bytes"]), str(row["tokens_est"]),
                 _recall_text(row)]
        prior = before.get(row["id"])
        if baseline:
            cells += [str(prior.get("request_bytes", "–")), _recall_text(prior)] if prior else ["–", "–"]
        cells += [_yes(row["fix_files_shown"]), _yes(row["fix_files_excerpted"])]
        if baseline:
            cells.append(_yes(prior["fix_files_excerpted"]) if prior and "error" not in prior else "–")
        if live and row.get("live"):
            run = row["live"]
            cost = "?" if run["cost_usd"] is None else f"{run['cost_usd']:.4f}"
            cells += [_yes(run["fixed"]), str(run["attempts"]),
                      f"{run['input_tokens']}/{run['output_tokens']}", cost, f"{run['wall_s']:.0f}"]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.0%}"


def _totals_table(result: dict[str, Any], baseline: dict[str, Any] | None) -> list[str]:
    old = (baseline or {}).get("totals", {})
    head = ["ecosystem", "cases", "mean request bytes", "mean tokens (est.)", "context recall (lines)",
            "mean case recall"]
    if baseline:
        head += [f"bytes ({baseline['label']})", f"recall ({baseline['label']})"]
    head += ["all fix files shown", "all fix files excerpted"]
    if baseline:
        head.append(f"excerpted ({baseline['label']})")
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, group in result["totals"].items():
        if name == "report_only":
            continue
        cells = [f"**{name}**" if name == "total" else name, str(group["cases"]),
                 str(group["mean_request_bytes"]), str(group["mean_tokens_est"]),
                 f"{_pct(group['recall'])} ({group['shown']}/{group['targets']})",
                 _pct(group["mean_case_recall"])]
        prior = old.get(name)
        if baseline:
            cells += [str(prior["mean_request_bytes"]), f"{_pct(prior['recall'])} ({prior['shown']}/"
                      f"{prior['targets']})"] if prior else ["–", "–"]
        cells += [f"{group['fix_files_shown']}/{group['cases']}",
                  f"{group['fix_files_excerpted']}/{group['cases']}"]
        if baseline:
            cells.append(f"{prior['fix_files_excerpted']}/{prior['cases']}" if prior else "–")
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def _live_table(result: dict[str, Any]) -> list[str]:
    lines = ["| ecosystem | fix rate | mean attempts | input tokens | output tokens | cost USD | wall s |",
             "|---|---|---|---|---|---|---|"]
    for name, group in result["totals"].items():
        live = group.get("live") if isinstance(group, dict) else None
        if not isinstance(live, dict):
            continue
        cost = "?" if live["cost_usd"] is None else f"{live['cost_usd']:.4f}"
        lines.append(f"| {name} | {live['fix_rate']:.0%} ({live['fixed']}/{live['runs']}) | "
                     f"{live['mean_attempts']} | {live['input_tokens']} | {live['output_tokens']} | {cost} | "
                     f"{live['wall_s']} |")
    return lines


def _report_only_table(rows: Sequence[Row], baseline: dict[str, Any] | None) -> list[str]:
    before = {row["id"]: row for row in (baseline or {}).get("report_only", [])}
    label = f" | bytes ({baseline['label']})" if baseline else ""
    lines = [f"| .NET log (report only) | request bytes | tokens (est.){label} |",
             "|---|---|---|" + ("---|" if baseline else "")]
    for row in rows:
        prior = str(before.get(row["id"], {}).get("request_bytes", "–")) if baseline else None
        if "request_bytes" not in row:
            why = str(row.get("error") or row.get("note") or "")
            cells = [row["id"], why[:80], ""]
        else:
            cells = [row["id"], str(row["request_bytes"]), str(row["tokens_est"])]
        lines.append("| " + " | ".join([*cells, *([prior] if prior is not None else [])]) + " |")
    return lines


def markdown(result: dict[str, Any], baseline: dict[str, Any] | None = None) -> str:
    parts = [f"fixbench `{result['label']}` (ci-agent from `{result['checkout']}`)", "",
             *_case_table(result, baseline), "", *_totals_table(result, baseline)]
    if result.get("live"):
        parts += ["", *_live_table(result)]
    if result.get("report_only"):
        ro = result["totals"]["report_only"]
        prior = (baseline or {}).get("totals", {}).get("report_only")
        mean_before = f" {prior['mean_request_bytes']} |" if prior else (" – |" if baseline else "")
        parts += ["", *_report_only_table(result["report_only"], baseline),
                  f"| **mean of {ro['measured']} requests** | {ro['mean_request_bytes']} | "
                  f"{ro['mean_tokens_est']} |{mean_before}"]
    return "\n".join(parts) + "\n"
