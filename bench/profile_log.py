"""Where the time goes on the big build log, phase by phase.

    python bench/profile_log.py bench/out/large-100mb.log            # phases, 3 fresh runs each
    python bench/profile_log.py bench/out/large-100mb.log --profile  # cProfile top 25 (registry)

Phases (each in a fresh interpreter, in-process parse time):
- envelope: decode + line cleaning only (`iter_log_lines`), no parser;
- msbuild:  envelope + the msbuild consumer alone (`parse_log(..., ["msbuild"])`);
- registry: what `parse_path` does (the sniffed .NET family: msbuild + dotnet_test);
- msbuild-nocache: msbuild alone with the parser's per-line cache bypassed (the line cache landed
  in 05e354b after the first figures showed the header parser as the hot spot), when the module
  exposes the cache this script knows how to bypass.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import statistics
import subprocess
import sys
import time
from pathlib import Path


def run_phase(path: str, phase: str) -> float:
    from ci_agent.envelope import EnvelopeInfo, iter_log_lines
    from ci_agent.parsers import parse_log, parse_path

    t0 = time.perf_counter()
    if phase == "envelope":
        with open(path, "rb") as fh:
            for _ in iter_log_lines(fh, EnvelopeInfo()):
                pass
    elif phase == "msbuild":
        with open(path, "rb") as fh:
            parse_log(fh, path, ["msbuild"])
    elif phase == "registry":
        parse_path(path)
    else:  # msbuild-nocache
        from ci_agent.parsers.msbuild import MsbuildConsumer

        consumer = MsbuildConsumer(path, cache_entries=0)
        with open(path, "rb") as fh:
            for line in iter_log_lines(fh, EnvelopeInfo()):
                consumer.feed(line)
        consumer.finish()
    return time.perf_counter() - t0


PHASES = ("envelope", "msbuild", "registry", "msbuild-nocache")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("log")
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--child", choices=PHASES)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    if args.child:
        print(run_phase(args.log, args.child))
        return 0
    if args.profile:
        prof = cProfile.Profile()
        prof.runcall(run_phase, args.log, "registry")
        pstats.Stats(prof).sort_stats("tottime").print_stats(25)
        return 0
    for phase in PHASES:
        times = []
        for _ in range(args.repeat):
            done = subprocess.run([sys.executable, str(Path(__file__)), args.log, "--child", phase],
                                  capture_output=True, text=True)
            if done.returncode != 0:
                print(f"{phase:16} failed: {done.stderr.strip().splitlines()[-1:]}")
                break
            times.append(float(done.stdout))
        if times:
            median = statistics.median(times)
            print(f"{phase:16} best {min(times):.2f} s  median {median:.2f} s  (in-process parse time)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
