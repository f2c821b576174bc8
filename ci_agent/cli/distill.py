"""`ci-agent distill PATH...`: read logs and result files, print one report (no API key needed)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ci_agent import git
from ci_agent.distill import distill, resolve_roots
from ci_agent.errors import InputError, UsageError
from ci_agent.inputs import expand_inputs, read_inputs
from ci_agent.logguard import CommandGuard
from ci_agent.parsers import XML_PARSERS
from ci_agent.render import render
from ci_agent.report import ParseResult
from ci_agent.triage.infra import classify

MIN_BYTES = 256  # below this not even the summary line and the omission lines fit


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
    # Issue 16: an environment failure (a feed down, a full disk, a killed process) is said so.
    # The logs are read again for its wording; result files and stdin (read once) only through
    # the report; distill knows no job, so no job outcome.
    logs = [Path(i.source.path) for i in inputs
            if i.source.path != "<stdin>" and i.source.format not in XML_PARSERS]
    verdict = classify(report, logs)
    rendered = render(report, args.output, max_bytes, cases, verdict.to_json() if verdict else None)
    write_stdout(rendered, commands=args.output == "github")
    return 0
