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
from typing import TextIO

from ci_agent import proc, sandbox
from ci_agent.distill import Input, distill, resolve_roots
from ci_agent.engine.budget import fingerprint
from ci_agent.inputs import expand_inputs, read_inputs
from ci_agent.parsers import parse_stream
from ci_agent.report import Report, RunError, Severity, SourceInfo

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


# (absolute folder, what to show instead of it): a file under the folder is shown as the label
# followed by its path inside the folder.
Labels = Sequence[tuple[str, str]]


def display_name(path: str, labels: Labels) -> str:
    """How an input is named to people and the model: never a runner's temp folder (a worktree,
    the download folder), but `shop/x.py`, `artifact test-results/junit.xml`, `job log 7-test.log`."""
    for folder, label in labels:
        base = folder.rstrip("/") + "/"
        if path.startswith(base):
            return label + path[len(base):]
    return path


def relabel(report: Report, labels: Labels) -> Report:
    """The report with every input name (sources, run errors, failures' source) shown by
    `display_name`. Pure; nothing reads a file by these names afterwards."""
    def name(path: str | None) -> str | None:
        return display_name(path, labels) if path else path
    sources = tuple(replace(s, path=display_name(s.path, labels)) for s in report.sources)
    return replace(report, sources=sources,
                   run_errors=tuple(replace(e, source=display_name(e.source, labels))
                                    for e in report.run_errors),
                   failures=tuple(replace(f, source=name(f.source)) for f in report.failures))


# The default `test_results` input and `results.globs`: a project without TRX files leaves it as
# it is, so it matching nothing is no news while a log or the command's output was read.
DEFAULT_RESULT_GLOB = "**/*.trx"


def _say_missing(globs: Sequence[str], found: Sequence[str], labels: Labels, warn: TextIO | None,
                 other_inputs: bool) -> None:
    """Several result globs are alternatives (`**/*.trx`, `**/junit*.xml`): one matching nothing is
    normal as long as another matched, so only when none matched is that said, once, in the names
    a person gave; and not at all for the default glob alone when there was something else to read."""
    default_only = all(g == DEFAULT_RESULT_GLOB or g.endswith("/" + DEFAULT_RESULT_GLOB) for g in globs)
    if not found and globs and warn is not None and not (default_only and other_inputs):
        shown = ", ".join(dict.fromkeys(repr(display_name(g, labels)) for g in globs))
        print(f"ci-agent: warning: no test-result file matches {shown}", file=warn)


def collect(
    workdir: Path,
    *,
    command: Sequence[str] = (),
    timeout_s: float = 1800,
    logs: Sequence[str] = (),
    result_globs: Sequence[str] = (),
    root: Path | None = None,
    labels: Labels = (),
    quiet: bool = False,
) -> Collected:
    """Run `command` for `workdir` (when given) in the sandbox, read `logs` and the result files
    matching `result_globs` (relative globs: files the command wrote; absolute: files of an earlier
    run), distill them into one report. Inputs under a folder of `labels`, `workdir`, `root` or
    the sandbox's copy are named relative to it (`display_name`); warnings about missing inputs go
    to stderr unless `quiet` (the caller already said them)."""
    git_root = str(root or workdir)
    labels = (*labels, (str(workdir), ""), *(((str(root), ""),) if root else ()))
    warn = None if quiet else sys.stderr
    absolute = [g for g in result_globs if os.path.isabs(g)]
    relative = [g for g in result_globs if not os.path.isabs(g)]
    log_paths = expand_inputs(list(logs), warn or io.StringIO())
    if not command:
        globs = [*absolute, *(str(workdir / g) for g in relative)]
        results = expand_inputs(globs, io.StringIO())
        _say_missing(globs, results, labels, warn, bool(log_paths))
        inputs = read_inputs([*log_paths, *results], None, False)
        return _collected(inputs, resolve_roots(inputs, None, git_root), None, timeout_s, labels)
    started = time.time()
    with sandbox.run(command, workdir, timeout=timeout_s, result_globs=relative) as ran:
        output = _command_input(ran.result)
        earlier = expand_inputs(absolute, io.StringIO())
        fresh = _fresh(ran.results, started)
        _say_missing([*absolute, *(str(workdir / g) for g in relative)], [*earlier, *fresh], labels, warn,
                     True)
        given = read_inputs([*log_paths, *earlier], None, False)
        written = read_inputs(fresh, None, False)
        # The command's output and files name paths in the folder it ran in (the sandbox's copy).
        ran_root = str(ran.directory) if ran.sandboxed else git_root
        inputs = [output, *given, *written]
        roots = [*resolve_roots([output], None, ran_root), *resolve_roots(given, None, git_root),
                 *resolve_roots(written, None, ran_root)]
        return _collected(inputs, roots, ran.result, timeout_s, (*labels, (ran_root, "")))


def _collected(inputs: list[Input], roots: list[str | None], result: proc.Result | None,
               timeout_s: float, labels: Labels) -> Collected:
    report = relabel(distill(inputs, None, roots), labels)
    if result is not None and not result.ok and not (report.failures or any(
            d.severity is Severity.ERROR for d in report.diagnostics)):
        # Nothing we recognise, yet it failed: the exit status and the last lines are the report.
        how = (f"timed out after {timeout_s:g} s" if result.timed_out
               else f"exited with code {result.returncode}")
        error = RunError(describe(result.argv), f"`{describe(result.argv)}` {how}\n{_tail(result)}")
        report = replace(report, run_errors=(*report.run_errors, error))
    return Collected(report, fingerprint(report), result)
