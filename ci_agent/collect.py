"""Collect for `fix --local`: run the build/test command (or take given files), distill.

A command's output is a log like any other; result files are only read when they are newer than
the command that should have written them, so a stale TRX from an earlier run never speaks for
this one.
"""

from __future__ import annotations

import io
import os
import shlex
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from ci_agent import proc, sandbox
from ci_agent.budget import fingerprint
from ci_agent.commands.distill import expand_inputs, read_inputs
from ci_agent.distill import Input, distill, resolve_roots
from ci_agent.model import Report, RunError, Severity, SourceInfo
from ci_agent.parsers import parse_stream

_TAIL_LINES = 40


@dataclass(frozen=True, slots=True)
class Collected:
    report: Report
    fingerprint: str
    command: proc.Result | None = None

    @property
    def red(self) -> bool:
        """Something fails: the report says so, or the command exited non-zero."""
        return bool(self.fingerprint) or (self.command is not None and not self.command.ok)


def describe(argv: Sequence[str]) -> str:
    return shlex.join(argv)


def _command_input(result: proc.Result) -> Input:
    gap = "\n" if result.stdout and not result.stdout.endswith("\n") else ""
    text = result.stdout + gap + result.stderr
    data = text.encode("utf-8", errors="replace")
    name = describe(result.argv)
    parsed = parse_stream(io.BytesIO(data), name)
    if result.ok:
        # A passing command's output in no format we know (or none at all) is not a failure.
        parsed.run_errors.clear()
    return Input(SourceInfo(name, parsed.format, len(data)), parsed)


def _tail(result: proc.Result) -> str:
    lines = (result.stdout + "\n" + result.stderr).strip().splitlines()
    return "\n".join(lines[-_TAIL_LINES:])


def _fresh(paths: list[str], since: float | None) -> list[str]:
    if since is None:
        return paths
    # One second of slack: some filesystems keep mtimes in whole seconds.
    return [p for p in paths if os.stat(p).st_mtime >= since - 1]


def collect(
    workdir: Path,
    *,
    command: Sequence[str] = (),
    timeout_s: float = 1800,
    logs: Sequence[str] = (),
    result_globs: Sequence[str] = (),
    root: Path | None = None,
) -> Collected:
    """Run `command` for `workdir` (when given) in the sandbox, read `logs` and the result files
    matching `result_globs` (relative globs: files the command wrote; absolute: files of an earlier
    run), distill them into one report."""
    git_root = str(root or workdir)
    absolute = [g for g in result_globs if os.path.isabs(g)]
    relative = [g for g in result_globs if not os.path.isabs(g)]
    if not command:
        paths = expand_inputs([*logs, *absolute, *(str(workdir / g) for g in relative)], sys.stderr)
        inputs = read_inputs(paths, None, False)
        return _collected(inputs, resolve_roots(inputs, None, git_root), None, timeout_s)
    started = time.time()
    with sandbox.run(command, workdir, timeout=timeout_s, result_globs=relative) as ran:
        output = _command_input(ran.result)
        given = read_inputs(expand_inputs([*logs, *absolute], sys.stderr), None, False)
        written = read_inputs(_fresh(ran.results, started), None, False)
        # The command's output and files name paths in the folder it ran in (the sandbox's copy).
        ran_root = str(ran.directory) if ran.sandboxed else git_root
        inputs = [output, *given, *written]
        roots = [*resolve_roots([output], None, ran_root), *resolve_roots(given, None, git_root),
                 *resolve_roots(written, None, ran_root)]
        return _collected(inputs, roots, ran.result, timeout_s)


def _collected(inputs: list[Input], roots: list[str | None], result: proc.Result | None,
               timeout_s: float) -> Collected:
    report = distill(inputs, None, roots)
    if result is not None and not result.ok and not (report.failures or any(
            d.severity is Severity.ERROR for d in report.diagnostics)):
        # Nothing we recognise, yet it failed: the exit status and the last lines are the report.
        how = (f"timed out after {timeout_s:g} s" if result.timed_out
               else f"exited with code {result.returncode}")
        error = RunError(describe(result.argv), f"`{describe(result.argv)}` {how}\n{_tail(result)}")
        report = replace(report, run_errors=(*report.run_errors, error))
    return Collected(report, fingerprint(report), result)
