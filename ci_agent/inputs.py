"""Reading the files a run is given: paths and globs expanded to files, each file (or stdin)
parsed into one `Input` of the distiller. Shared by `ci-agent distill`, the fix engine's input
collection and the sandbox, so it sits below all of them."""

from __future__ import annotations

import glob
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Sequence
from typing import BinaryIO, TextIO

from ci_agent.distill import Input
from ci_agent.errors import InputError
from ci_agent.parsers import parse_stream
from ci_agent.report import SourceInfo

STDIN = "-"
_GLOB_CHARS_RE = re.compile(r"[*?\[]")


def expand_inputs(patterns: Sequence[str], warn: TextIO) -> list[str]:
    """Paths and globs (`**` recursive) -> files, in argument order, each glob sorted, no repeats.

    A pattern that names nothing is reported on `warn` and skipped; the caller decides whether
    what is left is enough.
    """
    found: list[str] = []
    seen: set[str] = set()

    def add(path: str) -> None:
        key = path if path == STDIN else os.path.realpath(path)
        if key not in seen:
            seen.add(key)
            found.append(path)

    for pattern in patterns:
        if pattern == STDIN:
            add(STDIN)
        elif _GLOB_CHARS_RE.search(pattern):
            matches = sorted(p for p in glob.glob(pattern, recursive=True) if os.path.isfile(p))
            if not matches:
                print(f"ci-agent: warning: no file matches {pattern!r}", file=warn)
            for match in matches:
                add(match)
        elif os.path.isdir(pattern):
            print(f"ci-agent: warning: {pattern!r} is a directory; give files or a glob such as "
                  f"'{pattern.rstrip('/')}/**/*.trx'", file=warn)
        elif not os.path.lexists(pattern):
            print(f"ci-agent: warning: {pattern!r}: no such file", file=warn)
        else:
            add(pattern)
    return found


def _parse_file(path: str, forced: str | None, keep_cases: bool) -> Input:
    try:
        with open(path, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            result = parse_stream(fh, path, forced, keep_cases)
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from exc
    return Input(SourceInfo(path, result.format, size), result)


def _parse_stdin(stdin: BinaryIO, forced: str | None, keep_cases: bool) -> Input:
    # Spool to a temporary file: bounded memory, and we learn the size for the stats.
    with tempfile.TemporaryFile() as spool:
        shutil.copyfileobj(stdin, spool, 1 << 20)
        size = spool.tell()
        spool.seek(0)
        result = parse_stream(spool, "<stdin>", forced, keep_cases)
    return Input(SourceInfo("<stdin>", result.format, size), result)


def read_inputs(paths: Sequence[str], forced: str | None, keep_cases: bool,
                stdin: BinaryIO | None = None) -> list[Input]:
    inputs = []
    for path in paths:
        if path == STDIN:
            inputs.append(_parse_stdin(stdin if stdin is not None else sys.stdin.buffer, forced, keep_cases))
        else:
            inputs.append(_parse_file(path, forced, keep_cases))
    return inputs
