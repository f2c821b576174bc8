"""Fuzzing campaign over every input ci-agent reads (issue 8). Not a test: it reports, a reader judges.

    python bench/fuzz.py --examples 2000                       # every target, hypothesis only
    python bench/fuzz.py --examples 2000 --atheris-runs 20000  # plus an atheris run per target
    python bench/fuzz.py --examples 200 --target slash --target marker
    python bench/fuzz.py --list

Targets live in `tests/hardening/fuzz/` (the tests run each with a small count). Each target runs in
a fresh interpreter per engine, so its peak RSS (VmHWM of /proc/self/status, the PEAK_RSS_SNIPPET
of tests/conftest.py) is that target's alone. Per target and engine it records: inputs tried, inputs
that raised outside the documented error type or broke an invariant (findings, deduplicated by
exception type and innermost ci_agent frame, smallest input kept under bench/out/fuzz/findings/),
max input size, peak RSS, RSS before the first input, slowest input. Hypothesis runs from
`--seed` (recorded; the same seed replays the same inputs); atheris (libFuzzer, coverage-guided)
starts from the same seeds and runs `--atheris-runs` inputs per target, with `-seed` recorded, or is
reported as skipped with the reason when `import atheris` fails. JSON to bench/out/fuzz.json,
Markdown to stdout (or --markdown FILE).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
OUT = BENCH / "out" / "fuzz"


def _peak_rss_kib() -> int:
    namespace: dict[str, Any] = {}
    from tests.conftest import PEAK_RSS_SNIPPET

    exec(PEAK_RSS_SNIPPET, namespace)
    return int(namespace["peak_rss_kib"]())


def _rss_kib() -> int:
    with open("/proc/self/status") as fh:
        return next(int(line.split()[1]) for line in fh if line.startswith("VmRSS:"))


def _save_findings(stats: Any) -> None:
    folder = OUT / "findings"
    folder.mkdir(parents=True, exist_ok=True)
    for finding in stats.findings.values():
        (folder / f"{stats.target}-{finding.sha}.bin").write_bytes(finding.data)


def _finish(stats: Any, engine: str, started_rss: int, out: Path, extra: dict[str, Any]) -> None:
    _save_findings(stats)
    result = {**stats.to_json(), "engine": engine, "peak_rss_kib": _peak_rss_kib(),
              "start_rss_kib": started_rss, **extra}
    out.write_text(json.dumps(result))


def child_hypothesis(name: str, examples: int, seed: int, hang_s: float, out: Path) -> None:
    from tests.hardening.fuzz.campaign import run_hypothesis
    from tests.hardening.fuzz.targets_forge import all_targets

    target = all_targets()[name]
    target.seeds()  # build the corpus before the RSS baseline
    started_rss = _rss_kib()
    stats = run_hypothesis(target, examples, seed, hang_s)
    _finish(stats, "hypothesis", started_rss, out, {"seed": seed, "examples": examples})


def child_atheris(name: str, runs: int, seed: int, hang_s: float, out: Path) -> None:
    import atheris  # type: ignore[import-untyped,unused-ignore]

    with atheris.instrument_imports(include=["ci_agent"]):
        from tests.hardening.fuzz.harness import Stats, execute
        from tests.hardening.fuzz.targets_forge import all_targets

    target = all_targets()[name]
    stats = Stats(name)
    corpus_dir = Path(tempfile.mkdtemp(prefix=f"ci-agent-atheris-{name}-"))
    for index, data in enumerate(target.seeds()):
        (corpus_dir / f"seed-{index}").write_bytes(data)
    started_rss = _rss_kib()
    with target.session() as run:
        def one(data: bytes) -> None:
            execute(target, run, data, stats, hang_s)
            if stats.tried >= runs:  # libFuzzer exits from C (no atexit): report, then leave
                _finish(stats, "atheris", started_rss, out, {"seed": seed, "runs": runs})
                os._exit(0)

        OUT.mkdir(parents=True, exist_ok=True)
        atheris.Setup([sys.argv[0], f"-runs={runs * 4}", f"-seed={seed}", "-max_len=262144",
                       "-rss_limit_mb=4096", f"-artifact_prefix={OUT}/atheris-", str(corpus_dir)], one)
        atheris.Fuzz()
    _finish(stats, "atheris", started_rss, out, {"seed": seed, "runs": runs})


def _spawn(engine: str, name: str, count: int, args: argparse.Namespace) -> dict[str, Any]:
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as handle:
        out = Path(handle.name)
    log = OUT / f"{engine}-{name}.log"
    command = [sys.executable, str(Path(__file__)), "--child", engine, name, "--count", str(count),
               "--seed", str(args.seed), "--hang-s", str(args.hang_s), "--out", str(out)]
    started = time.perf_counter()
    with open(log, "wb") as sink:
        done = subprocess.run(command, cwd=REPO, stdout=sink, stderr=subprocess.STDOUT, check=False)
    wall = time.perf_counter() - started
    text = out.read_text() if out.exists() else ""
    out.unlink(missing_ok=True)
    if not text:
        return {"target": name, "engine": engine, "error": f"child exited {done.returncode}; see {log}",
                "wall_s": round(wall, 1)}
    return {**json.loads(text), "wall_s": round(wall, 1)}


def _atheris_missing() -> str:
    try:
        import atheris  # type: ignore[import-untyped,unused-ignore]  # noqa: F401
    except ImportError as exc:
        return f"atheris does not import here ({exc}); pip install atheris"
    return ""


def _cell_findings(row: dict[str, Any]) -> str:
    if "error" in row:
        return f"run failed: {row['error']}"
    found = row.get("findings") or []
    return "; ".join(f"{f['kind']} at {f['where']} ({f['count']}x, smallest {f['size']} B)"
                     for f in found) or "none"


def markdown(rows: list[dict[str, Any]], command: str, skipped: str) -> str:
    lines = [f"Command: `{command}`", "",
             f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}", "",
             "| target | engine | inputs | unexpected | max input | peak RSS (start) | slowest input | "
             "findings |", "|---|---|---:|---:|---:|---:|---|---|"]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['target']} | {r['engine']} | | | | | | {_cell_findings(r)} |")
            continue
        lines.append(
            f"| {r['target']} | {r['engine']} | {r['tried']} | {r['unexpected']} | {r['max_size']:,} B | "
            f"{r['peak_rss_kib'] // 1024} MiB ({r['start_rss_kib'] // 1024}) | {r['slowest_s']:.3f} s "
            f"({r['slowest_size']:,} B) | {_cell_findings(r)} |")
    total = sum(r.get("tried", 0) for r in rows)
    lines += ["", f"Inputs in all: {total:,}."]
    if skipped:
        lines.append(f"atheris: skipped: {skipped}")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--examples", type=int, default=500,
                        help="hypothesis inputs per target (after the seeds)")
    parser.add_argument("--atheris-runs", type=int, default=0, help="atheris inputs per target (0: none)")
    parser.add_argument("--target", action="append", default=[],
                        help="a target name (repeatable); all if none")
    parser.add_argument("--seed", type=int, default=20268, help="hypothesis and libFuzzer seed")
    parser.add_argument("--hang-s", type=float, default=20.0, help="an input running longer is a finding")
    parser.add_argument("--markdown", type=Path, help="write the table here instead of stdout")
    parser.add_argument("--list", action="store_true")
    parser.add_argument("--child", nargs=2, metavar=("ENGINE", "TARGET"), help=argparse.SUPPRESS)
    parser.add_argument("--count", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    sys.path.insert(0, str(REPO))
    if args.child:
        engine, name = args.child
        run = child_atheris if engine == "atheris" else child_hypothesis
        run(name, args.count, args.seed, args.hang_s, args.out)
        return 0
    from tests.hardening.fuzz.targets_forge import all_targets

    targets = all_targets()
    if args.list:
        for name, target in targets.items():
            print(f"{name:14} {target.what}")
        return 0
    unknown = [t for t in args.target if t not in targets]
    if unknown:
        parser.error(f"unknown target(s) {unknown}; see --list")
    OUT.mkdir(parents=True, exist_ok=True)
    skipped = _atheris_missing() if args.atheris_runs else ""
    rows = []
    for name in args.target or list(targets):
        engines = [("hypothesis", args.examples)]
        if args.atheris_runs and not skipped:
            engines.append(("atheris", args.atheris_runs))
        for engine, count in engines:
            row = _spawn(engine, name, count, args)
            rows.append(row)
            print(f"{name}: {engine} {row.get('tried')} inputs, {row.get('wall_s')} s", file=sys.stderr)
    (BENCH / "out" / "fuzz.json").write_text(json.dumps(rows, indent=1))
    command = "python bench/fuzz.py " + " ".join(argv if argv is not None else sys.argv[1:])
    table = markdown(rows, command, skipped)
    if args.markdown:
        args.markdown.write_text(table)
    else:
        print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
