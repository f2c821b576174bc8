"""`ci-agent distill PATH...`: read logs and result files, print one report (no API key needed)."""

from __future__ import annotations

import argparse
import glob
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import BinaryIO, TextIO

from ci_agent import git
from ci_agent.distill import Input, distill, resolve_roots
from ci_agent.errors import InputError, UsageError
from ci_agent.logguard import CommandGuard
from ci_agent.parsers import parse_stream
from ci_agent.render import render
from ci_agent.report import ParseResult, SourceInfo

STDIN = "-"
MIN_BYTES = 256  # below this not even the summary line and the omission lines fit
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


def write_stdout(text: str, commands: bool = False) -> None:
    """UTF-8 whatever the console's code page (a Windows runner's is often cp1252). `commands`:
    the text is our workflow command lines (`--output github`), passed by the log guard."""
    if commands and isinstance(sys.stdout, CommandGuard):
        sys.stdout.write_commands(text)
        return
    sys.stdout.flush()
    buffer = getattr(sys.stdout, "buffer", None)
    if buffer is not None:
        buffer.write(text.encode("utf-8", errors="replace"))
        buffer.flush()
    else:
        sys.stdout.write(text)
        sys.stdout.flush()


def run_distill(args: argparse.Namespace) -> int:
    max_bytes: int | None = args.max_bytes
    if max_bytes is not None and max_bytes < MIN_BYTES:
        raise UsageError(f"--max-bytes must be at least {MIN_BYTES} (got {max_bytes})")
    paths = expand_inputs(args.paths, sys.stderr)
    if not paths:
        named = ", ".join(repr(p) for p in args.paths)
        raise InputError(f"no input could be read: nothing found for {named}")
    keep_cases = args.output == "junit"
    inputs = read_inputs(paths, args.input_format, keep_cases)
    top = None if args.repo_root else git.work_tree_root(Path.cwd())
    git_root = str(top) if top is not None else None
    roots = resolve_roots(inputs, args.repo_root, git_root)
    report = distill(inputs, args.repo_root, roots)
    cases: list[tuple[str, ParseResult]] = [(i.source.path, i.result) for i in inputs]
    write_stdout(render(report, args.output, max_bytes, cases), commands=args.output == "github")
    return 0
