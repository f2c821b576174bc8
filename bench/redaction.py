"""Redaction: ours against Yelp's detect-secrets, on speed and on false positives (not a test).

Usage:
  python bench/redaction.py bench/out/large-100mb.log      # speed: ours on the whole file,
                                                           # detect-secrets on its first --sample-mb
  python bench/redaction.py --fixtures                     # false positives on the real fixtures

The fixtures (../shared/fixtures and tests/fixtures) hold real build logs and result files with no
real secret in them, so every finding there is a false positive: text the redactor would blank
out of what the model reads. Needs `pip install detect-secrets` (not a dependency of ours).
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import resource
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from ci_agent.redact import Redactor  # noqa: E402

SHARED = Path(os.environ.get("CI_AGENT_SHARED", REPO.parent / "shared")).resolve()
FIXTURE_ROOTS = (SHARED / "fixtures", REPO / "tests" / "fixtures")
_MARKER_RE = re.compile(r"\[REDACTED:([A-Za-z0-9_.:-]*)\]")


def _detect_secrets_scanner():  # type: ignore[no-untyped-def]
    from detect_secrets.core.scan import scan_line
    from detect_secrets.settings import default_settings

    return scan_line, default_settings


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def speed(path: Path, sample_mb: int) -> None:
    redactor = Redactor.from_environ({"CI_AGENT_BENCH_TOKEN": "bench-secret-0123456789"})
    data = path.read_text(encoding="utf-8", errors="replace")
    size_mb = len(data.encode()) / 1e6
    start = time.perf_counter()
    out = redactor.redact(data)
    took = time.perf_counter() - start
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"ours: {size_mb:.1f} MB in {took:.2f} s ({size_mb / took:.1f} MB/s), "
          f"{len(_MARKER_RE.findall(out))} markers, peak RSS {_peak_mb():.0f} MB (text held in memory)")
    del out
    scan_line, default_settings = _detect_secrets_scanner()
    sample = data[: sample_mb * 1_000_000]
    lines = sample.splitlines()
    found = 0
    with default_settings():
        start = time.perf_counter()
        for line in lines:
            found += sum(1 for _ in scan_line(line))
        took = time.perf_counter() - start
    mb = len(sample.encode()) / 1e6
    print(f"load average {os.getloadavg()[0]:.1f}")
    print(f"detect-secrets 1.5 (default plugins, scan_line): {mb:.1f} MB ({len(lines)} lines) in "
          f"{took:.2f} s ({mb / took:.2f} MB/s; 100 MB would take ~{100 / (mb / took):.0f} s), "
          f"{found} findings")


def _fixture_files() -> list[Path]:
    files = []
    for root in FIXTURE_ROOTS:
        files += [p for p in sorted(root.rglob("*")) if p.is_file() and p.stat().st_size < 20_000_000
                  and p.suffix.lower() not in (".zip", ".gz", ".png", ".jpg")]
    return files


def fixtures(max_kb: int) -> None:
    files = [p for p in _fixture_files() if p.stat().st_size <= max_kb * 1024]
    redactor = Redactor()
    ours: collections.Counter[str] = collections.Counter()
    ours_files = 0
    total = 0
    for path in files:
        text = path.read_text(encoding="utf-8", errors="replace")
        total += len(text.encode())
        names = _MARKER_RE.findall(redactor.redact(text))
        ours.update(names)
        ours_files += bool(names)
    print(f"{len(files)} fixture files, {total / 1e6:.1f} MB", flush=True)
    print(f"ours: {sum(ours.values())} redactions in {ours_files} files: {dict(ours.most_common())}",
          flush=True)
    scan_line, default_settings = _detect_secrets_scanner()
    theirs: collections.Counter[str] = collections.Counter()
    their_files = 0
    start = time.perf_counter()
    with default_settings():
        for path in files:
            hits = 0
            for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
                for secret in scan_line(line):
                    theirs[secret.type] += 1
                    hits += 1
            their_files += bool(hits)
    took = time.perf_counter() - start
    print(f"detect-secrets: {sum(theirs.values())} findings in {their_files} files ({took:.1f} s): "
          f"{dict(theirs.most_common())}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("log", nargs="?", type=Path)
    parser.add_argument("--sample-mb", type=int, default=5)
    parser.add_argument("--fixtures", action="store_true")
    parser.add_argument("--max-kb", type=int, default=256,
                        help="only fixture files up to this size (detect-secrets is slow)")
    args = parser.parse_args()
    if args.fixtures:
        fixtures(args.max_kb)
    if args.log:
        speed(args.log, args.sample_mb)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
