"""Write a large `dotnet build` console log (classic logger) built from REAL logs (benchmark input).

The in-build part of four real classic-logger logs from `dotnet-logs/` (everything before their
`Build FAILED.`) is repeated as blocks, chosen with a seeded RNG. Each block gets one of V
"module" variants (default 40): source and project file names get a suffix
(`Monster.cs` -> `Monster_m07.cs`, `App.csproj` -> `App_m07.csproj`), so the log holds a bounded
set of unique diagnostics printed many times, as a big multi-project build does. The end is what
MSBuild's ParallelConsoleLogger prints for `-consoleloggerparameters:Summary`: `Build FAILED.`, every
warning line again, then every error line again, the `N Warning(s)` / `N Error(s)` counts and
`Time Elapsed`. UTF-8 without BOM, LF. Streamed to disk; deterministic for a seed.

Usage: python bench/gen_large_log.py [--size-mb 100] [--out bench/out] [--seed 1] [--variants 40]
"""

from __future__ import annotations

import argparse
import os
import random
import re
import sys
from collections.abc import Iterator
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("CI_AGENT_SHARED", REPO_ROOT.parent / "shared")).resolve()
LOGS = SHARED / "fixtures" / "dotnet-logs"
TEMPLATES = (
    "cs-errors-multi-win.log",
    "msb3026-retry-warnings-crlf.log",
    "warnaserror-cs4014-razor-spaces.log",
    "nuget-restore-nu1605-warnaserror.log",
)
# A diagnostic header as the classic logger prints it: `origin: [subcategory] error|warning CODE:`
_DIAG = re.compile(r": (?:[^:]* )?(error|warning)(?: [A-Za-z]+[0-9]+)?\s*:")
_VARIED_FILE = re.compile(r"(?<=[\\/ ])([A-Za-z0-9_.]+?)\.(cs|csproj|razor)\b")


def _inline_part(name: str) -> list[str]:
    raw = (LOGS / name).read_bytes()
    text = raw.decode("utf-8-sig").replace("\r\n", "\n")
    return text.split("\nBuild FAILED.", 1)[0].rstrip("\n").split("\n")


def _vary(line: str, variant: int) -> str:
    return _VARIED_FILE.sub(lambda m: f"{m.group(1)}_m{variant:02d}.{m.group(2)}", line)


def _severity(line: str) -> str | None:
    m = _DIAG.search(line)
    return m.group(1) if m else None


def _blocks(count: int, seed: int, variants: int, templates: list[list[str]]) -> Iterator[list[str]]:
    rng = random.Random(seed)
    for _ in range(count):
        tpl = templates[rng.randrange(len(templates))]
        variant = rng.randrange(variants)
        yield [_vary(line, variant) for line in tpl]


def write_log(out: Path, size_mb: float, seed: int, variants: int) -> dict[str, int]:
    templates = [_inline_part(n) for n in TEMPLATES]
    target = size_mb * 1_000_000
    written = diag_bytes = blocks = warnings = errors = 0
    with open(out, "w", encoding="utf-8", newline="\n") as fh:
        # One pass writes blocks until inline + the summary they imply reach the target size.
        for lines in _blocks(10**9, seed, variants, templates):
            text = "\n".join(lines) + "\n"
            fh.write(text)
            written += len(text.encode())
            for line in lines:
                sev = _severity(line)
                if sev:
                    diag_bytes += len(line.encode()) + 1
                    warnings += sev == "warning"
                    errors += sev == "error"
            blocks += 1
            if written + diag_bytes >= target:
                break
        fh.write("\nBuild FAILED.\n\n")
        for wanted in ("warning", "error"):  # the summary lists all warnings first, then all errors
            for lines in _blocks(blocks, seed, variants, templates):
                fh.writelines(line + "\n" for line in lines if _severity(line) == wanted)
        fh.write(f"    {warnings} Warning(s)\n    {errors} Error(s)\n\nTime Elapsed 00:41:07.93\n")
    return {"blocks": blocks, "warnings": warnings, "errors": errors, "bytes": out.stat().st_size}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--size-mb", type=float, default=100.0)
    ap.add_argument("--out", type=Path, default=Path(__file__).parent / "out")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--variants", type=int, default=40)
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    name = f"large-{args.size_mb:g}mb.log"
    info = write_log(args.out / name, args.size_mb, args.seed, args.variants)
    print(f"{name}: {info}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
