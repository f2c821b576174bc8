"""Where the time goes on the big build log, and what one cache would save (an experiment only).

    python bench/profile_log.py bench/out/large-100mb.log            # plain vs memoized, 3 runs each
    python bench/profile_log.py bench/out/large-100mb.log --profile  # cProfile top 25 (plain)

"memo" wraps the msbuild parser's `parse_header` and `split_markers` in `functools.lru_cache`
inside this process only (no parser file is changed): a classic log prints every diagnostic line
verbatim at least twice, so a bounded cache keyed by the line text skips most of the parsing.
The phases line times the log envelope alone (decode + line cleaning, no parser).
"""

from __future__ import annotations

import argparse
import cProfile
import functools
import pstats
import statistics
import subprocess
import sys
import time
from pathlib import Path


def run_once(path: str, memo: bool) -> float:
    import ci_agent.parsers.msbuild as msbuild

    if memo:
        msbuild.parse_header = functools.lru_cache(maxsize=65536)(msbuild.parse_header)
        msbuild.split_markers = functools.lru_cache(maxsize=65536)(msbuild.split_markers)
    from ci_agent.parsers import parse_path

    t0 = time.perf_counter()
    parse_path(path)
    return time.perf_counter() - t0


def envelope_only(path: str) -> float:
    from ci_agent.envelope import EnvelopeInfo, iter_log_lines

    t0 = time.perf_counter()
    with open(path, "rb") as fh:
        for _ in iter_log_lines(fh, EnvelopeInfo()):
            pass
    return time.perf_counter() - t0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("log")
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--child", choices=("plain", "memo", "envelope"))
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    if args.child:
        memo = args.child == "memo"
        print(envelope_only(args.log) if args.child == "envelope" else run_once(args.log, memo))
        return 0
    if args.profile:
        prof = cProfile.Profile()
        prof.runcall(run_once, args.log, False)
        pstats.Stats(prof).sort_stats("tottime").print_stats(25)
        return 0
    for mode in ("envelope", "plain", "memo"):
        times = [float(subprocess.run([sys.executable, str(Path(__file__)), args.log, "--child", mode],
                                      capture_output=True, text=True, check=True).stdout)
                 for _ in range(args.repeat)]
        median = statistics.median(times)
        print(f"{mode:9} best {min(times):.2f} s  median {median:.2f} s  (in-process parse time)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
