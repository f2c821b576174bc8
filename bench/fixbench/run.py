"""fixbench: what ci-agent's first request shows of each case's true fix; with --live, the fix rate.

    python bench/fixbench/run.py                                   # every case, offline
    python bench/fixbench/run.py --python /work/wt-before/.venv/bin/python --label before
    python bench/fixbench/run.py --baseline bench/out/fixbench/before.json --label after
    python bench/fixbench/run.py --live --model claude-sonnet-4-5  # needs ANTHROPIC_API_KEY

For each case a real git repository is built in a temp folder (before/ as "initial" on `main`, the
breaking commit on branch `change`, checked out) and `<python> -m ci_agent fix --local --dry-run`
gives the exact first request. Offline metrics (definitions: fixmetrics.py and README.md): request
bytes, tokens (estimate: bytes / 4), context recall, whether every file the fix touches is shown
(anywhere, and outside git diffs). The .NET logs of the shared corpus are report-only rows (no
project, no true fix): bytes and tokens only. `--python` picks the interpreter, hence the checkout,
that runs ci-agent: the same harness measures another checkout. Results: a Markdown table on stdout
(or --markdown FILE) and JSON in bench/out/fixbench/<label>.json.

--live also runs the whole loop per case (`fix --local --verify <case command>`, nothing pushed) and
reports fix rate, attempts, tokens, cost and wall time; it refuses to start without ANTHROPIC_API_KEY.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import fixmetrics
import fixtables
from fixcase import CASES_DIR, Case, CaseError, committed_cases, load_case
from fixlive import price_of, run_live
from fixrequest import (
    build_plain_repo,
    build_repo,
    checkout_of,
    dry_run,
    request_bytes,
    stage_outputs,
    tracked_files,
)

BENCH = Path(__file__).resolve().parents[1]
OUT = BENCH / "out" / "fixbench"
SHARED = Path(os.environ.get("CI_AGENT_SHARED", BENCH.parent.parent / "shared")).resolve()
DOTNET_LOGS = SHARED / "fixtures" / "dotnet-logs"


def measure_request(request: dict[str, Any], files: dict[str, list[str]], fix_diff: str) -> dict[str, Any]:
    """The offline metrics of one first request against one true fix."""
    shape = fixmetrics.fix_shape(fix_diff, files)
    found = fixmetrics.passages(fixmetrics.request_text(request), files)
    shown = fixmetrics.shown_targets(shape.targets, found, files)
    existing = [path for path in shape.files if path in files]
    anywhere = fixmetrics.files_shown(existing, found, files, outside_diff=False)
    excerpted = fixmetrics.files_shown(existing, found, files, outside_diff=True)
    size = request_bytes(request)
    return {
        "request_bytes": size, "tokens_est": fixmetrics.estimate_tokens(size),
        "targets": len(shape.targets), "shown": sum(shown),
        "recall": round(sum(shown) / len(shape.targets), 4) if shape.targets else None,
        "missed": [f"{t.path}:{t.line}" for t, ok in zip(shape.targets, shown, strict=True) if not ok],
        "fix_files": shape.files,
        "fix_files_shown": all(anywhere.values()),
        "fix_files_excerpted": all(excerpted.values()),
        "files_not_excerpted": [path for path, ok in excerpted.items() if not ok],
    }


def case_inputs(case: Case) -> dict[str, list[Path]]:
    return {kind: case.output_files(kind) for kind in case.outputs}


def run_case(case: Case, args: argparse.Namespace) -> dict[str, Any]:
    row: dict[str, Any] = {"id": case.id, "ecosystem": case.ecosystem, "breakage": case.breakage}
    with tempfile.TemporaryDirectory(prefix=f"fixbench-{case.id}-") as tmp:
        work = Path(tmp)
        build_repo(case, work / "repo")
        flags = stage_outputs(case_inputs(case), work)
        made = dry_run(args.python, work, flags)
        if made.request is None:
            row["error"] = f"no request (exit {made.exit_code}): {made.stderr.strip()[-300:]}"
            return row
        row.update(measure_request(made.request, tracked_files(work / "repo"),
                                   case.fix_diff.read_text(encoding="utf-8")))
        if args.live:
            model = args.model or str(made.request.get("model", ""))
            live = run_live(case, args.python, work, flags, model=args.model, max_attempts=args.max_attempts,
                            price=price_of(model, args.price), environ=dict(os.environ),
                            timeout=args.timeout)
            row["live"] = {"model": model, **live.to_json()}
    return row


def run_report_only(log: Path, args: argparse.Namespace) -> dict[str, Any]:
    row: dict[str, Any] = {"id": log.name, "ecosystem": "dotnet", "breakage": "report-only"}
    with tempfile.TemporaryDirectory(prefix="fixbench-dotnet-") as tmp:
        work = Path(tmp)
        build_plain_repo(work / "repo")
        made = dry_run(args.python, work, stage_outputs({"build_log": [log]}, work))
    if made.request is None and made.exit_code == 0:
        row["note"] = "no request: ci-agent finds no failure in this log"
        return row
    if made.request is None:
        row["error"] = f"no request (exit {made.exit_code}): {made.stderr.strip()[-200:]}"
        return row
    size = request_bytes(made.request)
    row.update({"request_bytes": size, "tokens_est": fixmetrics.estimate_tokens(size)})
    return row


def report_only_logs(folder: Path) -> list[Path]:
    if not folder.is_dir():
        return []
    return sorted(path for path in folder.iterdir()
                  if path.is_file() and not path.name.startswith(".")
                  and not path.name.endswith((".json", ".md")))


def _select(names: list[str]) -> list[Case]:
    folders = [Path(n) if Path(n).is_dir() else CASES_DIR / n for n in names] if names else committed_cases()
    return [load_case(folder) for folder in folders]


def _parse_price(text: str | None) -> tuple[float, float] | None:
    if not text:
        return None
    per_in, per_out = (float(part) for part in text.split(","))
    return per_in, per_out


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("cases", nargs="*", help="case folders or ids (default: every case)")
    parser.add_argument("--python", default=sys.executable, help="interpreter that runs ci-agent")
    parser.add_argument("--label", default="current", help="names the JSON file (before, after, ...)")
    parser.add_argument("--out", type=Path, default=OUT, help=f"JSON folder (default {OUT})")
    parser.add_argument("--markdown", type=Path, help="write the tables here instead of stdout")
    parser.add_argument("--baseline", type=Path, help="an earlier JSON: adds its recall beside ours")
    parser.add_argument("--dotnet-logs", type=Path, default=DOTNET_LOGS, help="report-only logs folder")
    parser.add_argument("--no-report-only", action="store_true", help="skip the report-only .NET rows")
    parser.add_argument("--live", action="store_true", help="run the whole loop (needs ANTHROPIC_API_KEY)")
    parser.add_argument("--model", help="Claude model for --live (default: ci-agent's)")
    parser.add_argument("--max-attempts", type=int, help="ci-agent's attempt budget for --live")
    parser.add_argument("--price", type=_parse_price, help="USD per MTok 'IN,OUT' for --live cost")
    parser.add_argument("--jobs", type=int, default=1, help="cases run at once (1; live runs: keep 1)")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per live run (900)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.live and not os.environ.get("ANTHROPIC_API_KEY"):
        print("--live needs ANTHROPIC_API_KEY (the offline metrics need no key)", file=sys.stderr)
        return 2
    try:
        cases = _select(args.cases)
    except CaseError as exc:
        print(f"fixbench: {exc}", file=sys.stderr)
        return 2
    # each row is a child process's work: threads are enough to overlap them (--jobs)
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        rows = []
        for row in pool.map(lambda case: run_case(case, args), cases):
            rows.append(row)
            print(f"fixbench: {fixtables.progress_line(row)}", file=sys.stderr)
        logs = [] if args.no_report_only or args.cases else report_only_logs(args.dotnet_logs)
        report_only = list(pool.map(lambda log: run_report_only(log, args), logs))
    baseline = json.loads(args.baseline.read_text(encoding="utf-8")) if args.baseline else None
    result = {"label": args.label, "python": args.python, "checkout": checkout_of(args.python),
              "live": args.live, "cases": rows, "report_only": report_only,
              "totals": fixtables.totals(rows, report_only)}
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / f"{args.label}.json").write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    tables = fixtables.markdown(result, baseline)
    if args.markdown:
        args.markdown.write_text(tables, encoding="utf-8")
    else:
        sys.stdout.write(tables)
    return 1 if any("error" in row for row in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
