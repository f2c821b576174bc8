"""ci-agent distillation benchmarks (DESIGN.md §6). Not tests: nothing here asserts a time.

    python bench/run.py --all                 # generate inputs if missing, perf + reduction
    python bench/run.py --perf --repeat 3     # 100 MB TRX / JUnit / log vs peers
    python bench/run.py --reduction           # bytes in vs llm bytes on the real fixtures

Every case runs in a fresh interpreter (`bench/_child.py` or the `ci-agent` CLI). Wall time is
measured around the child (interpreter start and imports included); peak RSS is the child's
`ru_maxrss` from os.wait4, i.e. exactly that process. Results go to bench/out/results.json and
Markdown tables to stdout (or --markdown FILE).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
OUT = BENCH / "out"
FIXTURES = Path(os.environ.get("CI_AGENT_SHARED", REPO.parent / "shared")).resolve() / "fixtures"
CHILD = [sys.executable, str(BENCH / "_child.py")]
CLI = [sys.executable, "-m", "ci_agent", "distill"]

sys.path.insert(0, str(BENCH))
import gen_large_log  # noqa: E402
import gen_large_trx  # noqa: E402


@dataclass
class Run:
    wall_s: float
    cpu_s: float  # user + sys of the child: far less sensitive than wall to other load on the box
    maxrss_mb: float
    rc: int
    report: dict[str, Any]
    stderr_tail: str


@dataclass
class Case:
    group: str
    tool: str
    input: Path
    argv: list[str]
    runs: list[Run] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        ok = [r for r in self.runs if r.rc == 0]
        walls = [r.wall_s for r in ok]
        return {
            "group": self.group, "tool": self.tool, "input": self.input.name,
            "input_mb": self.input.stat().st_size / 1e6,
            "runs": len(self.runs), "failed_runs": len(self.runs) - len(ok),
            "best_s": min(walls) if walls else None,
            "median_s": statistics.median(walls) if walls else None,
            "cpu_best_s": min((r.cpu_s for r in ok), default=None),
            "work_best_s": min((r.report.get("work_s", float("nan")) for r in ok), default=None),
            "peak_rss_mb": max((r.maxrss_mb for r in ok), default=None),
            "found": _found(ok[-1].report) if ok else _last_line(self.runs[-1].stderr_tail),
        }


def _last_line(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return "FAILED: " + (lines[-1] if lines else "no output").replace("|", "/")


def _found(report: dict[str, Any]) -> str:
    keys = ("tests", "failed", "failures_kept", "printed_diagnostics", "unique_diagnostics",
            "unique_lines", "llm_bytes", "run_errors")
    return ", ".join(f"{k}={report[k]}" for k in keys if report.get(k) is not None)


# Linux carries a process's RSS high-water mark across exec, so a child forked from this (30 MB)
# runner would report at least the runner's RSS. GNU time is a ~2 MB C process: forking from it
# keeps the floor negligible. Without it, os.wait4's ru_maxrss is used (an upper bound).
GNU_TIME = "/usr/bin/time" if os.access("/usr/bin/time", os.X_OK) else None


def measure(argv: list[str]) -> Run:
    """Run argv to completion: wall clock around it, and that child's own CPU time and peak RSS."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, \
            tempfile.NamedTemporaryFile("r") as timing:
        wrapped = [GNU_TIME, "-f", "%M %U %S", "-o", timing.name, *argv] if GNU_TIME else argv
        t0 = time.perf_counter()
        proc = subprocess.Popen(wrapped, stdout=out, stderr=err, cwd=REPO)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        rc = os.waitstatus_to_exitcode(status)
        maxrss_mb, cpu = usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime
        if GNU_TIME:  # last line: "%M %U %S" (a signal death adds a line before it)
            rss_kb, user, system = timing.read().split("\n")[-2].split()
            maxrss_mb, cpu = int(rss_kb) / 1024, float(user) + float(system)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    report: dict[str, Any] = {}
    if argv[0] == "grep":
        report = {"printed_diagnostics": int(stdout or b"0")}
    elif rc == 0:
        report = _child_report(argv, stdout)
    return Run(wall, cpu, maxrss_mb, rc, report, stderr.decode("utf-8", "replace")[-400:])


def _child_report(argv: list[str], stdout: bytes) -> dict[str, Any]:
    if argv[:len(CLI)] != CLI:
        return dict(json.loads(stdout))
    # The CLI prints the §4.1 JSON report; keep what shows it read the whole file.
    try:
        doc = json.loads(stdout)
    except ValueError:
        return {"stdout_bytes": len(stdout)}
    tests, stats = doc.get("tests") or {}, doc.get("stats") or {}
    return {"tests": tests.get("total"), "failed": tests.get("failed"),
            "failures_kept": len(tests.get("failures") or []),
            "printed_diagnostics": stats.get("printed_diagnostics"),
            "unique_diagnostics": stats.get("unique_diagnostics"),
            "llm_bytes": stats.get("llm_bytes"), "run_errors": len(doc.get("run_errors") or [])}


# --- inputs --------------------------------------------------------------------------------------

def ensure_inputs(size_mb: float, small_log_mb: float) -> dict[str, Path]:
    OUT.mkdir(parents=True, exist_ok=True)
    tag, small = f"{size_mb:g}mb", f"{small_log_mb:g}mb"
    paths = {
        "trx": OUT / f"large-{tag}.trx",
        "junit": OUT / f"large-{tag}.junit.xml",
        "log": OUT / f"large-{tag}.log",
        "log_small": OUT / f"large-{small}.log",
    }
    if not paths["trx"].exists():
        print(gen_large_trx.write_trx(paths["trx"], size_mb, seed=1, fail_ratio=0.01), file=sys.stderr)
    if not paths["junit"].exists():
        print(gen_large_trx.write_junit(paths["junit"], size_mb), file=sys.stderr)
    for key, mb in (("log", size_mb), ("log_small", small_log_mb)):
        if not paths[key].exists():
            print(gen_large_log.write_log(paths[key], mb, seed=1, variants=40), file=sys.stderr)
    return paths


# --- performance ---------------------------------------------------------------------------------

def perf_cases(paths: dict[str, Path]) -> list[Case]:
    def ours(group: str, p: Path) -> list[Case]:
        return [Case(group, "ci-agent distill --output json", p, [*CLI, "--output", "json", str(p)]),
                Case(group, "ours: parse_path (+distill) API", p, [*CHILD, "ours-api", str(p)])]

    def child(group: str, tool: str, p: Path) -> Case:
        return Case(group, tool, p, [*CHILD, tool, str(p)])

    trx, junit, log, small = paths["trx"], paths["junit"], paths["log"], paths["log_small"]
    return [
        child("baseline", "noop", trx),
        *ours("TRX", trx), child("TRX", "lxml-parse", trx), child("TRX", "lxml-iterparse-floor", trx),
        *ours("JUnit", junit), child("JUnit", "lxml-parse", junit),
        child("JUnit", "lxml-iterparse-floor", junit), child("JUnit", "junitparser", junit),
        child("JUnit", "test-results-parser", junit),
        *ours("log", log), child("log", "line-scan", log),
        Case("log", "grep -c (GNU grep, C)", log,
             ["grep", "-c", "-E", r"\b(error|warning) [A-Z]+[0-9]+:", str(log)]),
        *ours("log-small", small), child("log-small", "line-scan", small),
    ]


def run_cases(cases: list[Case], repeat: int) -> None:
    """Round-robin (all cases once, then again): a burst of load elsewhere on the machine then
    hits every tool alike instead of whichever case happened to be running."""
    for i in range(repeat):
        for case in cases:
            case.runs.append(measure(case.argv))
            s = case.summary()
            print(f"pass {i + 1}/{repeat} {case.group:10} {case.tool:34} wall={case.runs[-1].wall_s:.2f} "
                  f"cpu={case.runs[-1].cpu_s:.2f} rss={case.runs[-1].maxrss_mb:.0f} {s['found']}",
                  file=sys.stderr)


# --- reduction on real fixtures ------------------------------------------------------------------

def reduction_inputs() -> list[Path]:
    skip = ("README.md", ".gitattributes")
    logs = sorted(p for p in (FIXTURES / "dotnet-logs").iterdir()
                  if p.is_file() and not p.name.endswith(".json") and p.name not in skip)
    trx = sorted((FIXTURES / "enricomi" / "trx").rglob("*.trx"))
    junit = [FIXTURES / "dorny/fixtures/external/java/pulsar-test-report.xml",
             FIXTURES / "dorny/fixtures/external/jest/jest-test-results.xml",
             FIXTURES / "dorny/fixtures/jest-junit.xml",
             FIXTURES / "dorny/fixtures/python-xunit-pytest.xml"]
    return [*logs, *trx, *[p for p in junit if p.exists()]]


_DIAG_LINE = re.compile(r"\b(?:error|warning) [A-Z]+[0-9]+:")


def _has_duplicated_summary(path: Path) -> bool:
    """A classic-logger summary: a diagnostic line after `Build FAILED.` that was printed before it."""
    raw = path.read_bytes()
    text = raw.decode("utf-16") if raw[:2] in (b"\xff\xfe", b"\xfe\xff") else raw.decode("utf-8", "replace")
    before, marker, after = text.partition("Build FAILED.")
    if not marker:
        return False
    seen = {ln.strip() for ln in before.splitlines() if _DIAG_LINE.search(ln)}
    return any(ln.strip() in seen for ln in after.splitlines() if _DIAG_LINE.search(ln))


# The llm renderer's budget line: `... 25 more errors omitted (see the JSON report)`.
_OMITTED = re.compile(r"^\.\.\. (\d+) more [\w ]+ omitted", re.MULTILINE)


def reduction(paths: list[Path]) -> list[dict[str, Any]]:
    rows = []
    for p in paths:
        size = p.stat().st_size
        # Run from the file's folder with its bare name, as a user types `ci-agent distill build.log`
        # (the `inputs:` line of the llm text prints the path as given).
        env = {**os.environ, "PYTHONPATH": str(REPO)}
        js = subprocess.run([*CLI, "--output", "json", p.name], capture_output=True, cwd=p.parent, env=env)
        llm = subprocess.run([*CLI, "--output", "llm", p.name], capture_output=True, cwd=p.parent, env=env)
        row: dict[str, Any] = {"file": str(p.relative_to(FIXTURES)), "bytes_in": size,
                               "dup_summary": p.suffix != ".trx" and _has_duplicated_summary(p),
                               "rc_json": js.returncode, "rc_llm": llm.returncode}
        try:
            doc = json.loads(js.stdout)
            stats, tests = doc.get("stats") or {}, doc.get("tests") or {}
            row.update(printed=stats.get("printed_diagnostics"), unique=stats.get("unique_diagnostics"),
                       stats_llm_bytes=stats.get("llm_bytes"), failed_tests=tests.get("failed"),
                       kept_failures=len(tests.get("failures") or []), tests=tests.get("total"))
        except ValueError:
            row["error"] = (js.stderr.decode("utf-8", "replace") or "no JSON")[-200:]
        expected = p.with_name(p.name + ".expected.json")
        if expected.exists():  # hand-written oracle next to each dotnet log
            exp = json.loads(expected.read_text(encoding="utf-8"))
            row["expected"] = f"{len(exp.get('errors', [])) + len(exp.get('warnings', []))} / " \
                              f"{exp.get('printed_diagnostic_lines', '?')}"
        if llm.returncode in (0, 1) and llm.stdout:
            row["llm_bytes"] = len(llm.stdout)
            row["ratio"] = size / len(llm.stdout)
            row["llm_omitted"] = sum(int(n) for n in _OMITTED.findall(llm.stdout.decode("utf-8", "replace")))
        rows.append(row)
        print(f"{row['file']:70} {size:>9} -> {row.get('llm_bytes')} ({row.get('ratio')})", file=sys.stderr)
    return rows


# --- reporting -----------------------------------------------------------------------------------

def machine_facts() -> dict[str, str]:
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    facts = {"nproc": str(os.cpu_count()), "cpu": cpu, "python": platform.python_version(),
             "platform": platform.platform(),
             "load average at start (1/5/15 min)": " / ".join(f"{x:.2f}" for x in os.getloadavg())}
    try:
        mem = Path("/proc/meminfo").read_text().splitlines()[0].split()[1]
        facts["memory"] = f"{int(mem) / 1024 / 1024:.1f} GiB"
    except (OSError, IndexError, ValueError):
        pass
    for dist in ("ci-agent", "lxml", "junitparser", "test_results_parser"):
        try:
            facts[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            facts[dist] = "not installed"
    with contextlib.suppress(OSError):
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO,
                              capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "ci_agent"], cwd=REPO,
                               capture_output=True, text=True).stdout.strip()
        # The checkout is shared with people editing it: say when ci_agent/ differed from HEAD.
        facts["ci-agent commit"] = head + (" (ci_agent/ had uncommitted changes)" if dirty else "")
    return facts


def _fmt(v: Any, spec: str = ".2f") -> str:
    return "–" if v is None or v != v else format(v, spec)  # v != v: NaN (no in-process timer)


def input_facts(paths: dict[str, Path]) -> list[str]:
    """Size and digest of each generated input, so another run can check it read the same bytes."""
    rows = ["| generated input | bytes | sha256 (first 16) |", "|---|---|---|"]
    for p in paths.values():
        digest = hashlib.sha256()
        with open(p, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                digest.update(chunk)
        rows.append(f"| {p.name} | {p.stat().st_size} | {digest.hexdigest()[:16]} |")
    return [*rows, ""]


def markdown(facts: dict[str, str], perf: list[dict[str, Any]], red: list[dict[str, Any]],
             argv: list[str], inputs: list[str] | None = None) -> str:
    lines = [f"Command: `python bench/{' '.join(['run.py', *argv])}`", "",
             "| machine | |", "|---|---|", *[f"| {k} | {v} |" for k, v in facts.items()], "",
             *(inputs or [])]
    if perf:
        lines += ["| group | tool | input | MB | best wall s | median wall s | best CPU s | work s (best) | "
                  "peak RSS MB | runs | found |", "|---|---|---|---|---|---|---|---|---|---|---|"]
        for s in perf:
            lines.append(f"| {s['group']} | {s['tool']} | {s['input']} | {s['input_mb']:.1f} | "
                         f"{_fmt(s['best_s'])} | {_fmt(s['median_s'])} | {_fmt(s['cpu_best_s'])} | "
                         f"{_fmt(s['work_best_s'])} | "
                         f"{_fmt(s['peak_rss_mb'], '.0f')} | {s['runs'] - s['failed_runs']}/{s['runs']} | "
                         f"{s['found']} |")
        lines.append("")
    if red:
        lines += ["| fixture | bytes in | llm bytes | reduction | printed diags | unique diags | "
                  "expected unique / printed (fixture oracle) | failed tests (in report) | "
                  "items omitted from llm text | dup. summary |",
                  "|---|---|---|---|---|---|---|---|---|---|"]
        for r in red:
            failed = "–" if r.get("failed_tests") is None else \
                f"{r['failed_tests']} ({r.get('kept_failures')})"
            lines.append(f"| {r['file']} | {r['bytes_in']} | {r.get('llm_bytes', '–')} | "
                         f"{_fmt(r.get('ratio'), '.1f')}{'x' if r.get('ratio') else ''} | "
                         f"{r.get('printed', '–')} | {r.get('unique', '–')} | {r.get('expected', '')} | "
                         f"{failed} | "
                         f"{r.get('llm_omitted', '–')} | "
                         f"{'yes' if r['dup_summary'] else ''} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    ap = argparse.ArgumentParser(description="ci-agent distillation benchmarks")
    ap.add_argument("--all", action="store_true", help="--perf and --reduction")
    ap.add_argument("--perf", action="store_true")
    ap.add_argument("--reduction", action="store_true")
    ap.add_argument("--repeat", type=int, default=3, help="runs per perf case (best and median)")
    ap.add_argument("--size-mb", type=float, default=100.0)
    ap.add_argument("--small-log-mb", type=float, default=10.0)
    ap.add_argument("--only", help="perf: run only groups containing this text (TRX, JUnit, log)")
    ap.add_argument("--markdown", type=Path, help="write the tables here instead of stdout")
    ap.add_argument("--update-benchmarks", action="store_true",
                    help="also replace the generated section of BENCHMARKS.md (between its markers)")
    args = ap.parse_args(argv)
    if not (args.all or args.perf or args.reduction):
        ap.error("choose --all, --perf or --reduction")
    facts = machine_facts()
    perf: list[dict[str, Any]] = []
    red: list[dict[str, Any]] = []
    raw: dict[str, Any] = {"facts": facts, "argv": argv}
    inputs: list[str] = []
    if args.all or args.perf:
        paths = ensure_inputs(args.size_mb, args.small_log_mb)
        inputs = input_facts(paths)
        cases = perf_cases(paths)
        if args.only:
            cases = [c for c in cases if args.only.lower() in c.group.lower() or c.group == "baseline"]
        run_cases(cases, args.repeat)
        perf = [c.summary() for c in cases]
        raw["perf"] = [{**c.summary(), "runs_raw": [asdict(r) for r in c.runs]} for c in cases]
    if args.all or args.reduction:
        red = reduction(reduction_inputs())
        raw["reduction"] = red
    facts["load average at end (1/5/15 min)"] = " / ".join(f"{x:.2f}" for x in os.getloadavg())
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "results.json").write_text(json.dumps(raw, indent=1, default=str))
    text = markdown(facts, perf, red, argv, inputs)
    if args.markdown:
        args.markdown.write_text(text)
    else:
        print(text)
    if args.update_benchmarks:
        update_benchmarks(REPO / "BENCHMARKS.md", text)
    return 0


BEGIN, END = "<!-- generated by bench/run.py: begin -->", "<!-- generated by bench/run.py: end -->"


def update_benchmarks(doc: Path, tables: str) -> None:
    """Swap the generated section only; the prose around it is written by hand from these tables."""
    text = doc.read_text(encoding="utf-8")
    head, _, rest = text.partition(BEGIN)
    _, _, tail = rest.partition(END)
    doc.write_text(f"{head}{BEGIN}\n{tables}{END}{tail}", encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
