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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from ci_agent import proc
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


# What ci-agent itself holds: the model key, the forge tokens, the relay secret, the runner's
# own tokens. The build / verify command runs code a model patched under attacker-influenced input,
# so it never gets them (a build that needs a registry token gets it under its own name).
_OWN_SECRETS = frozenset({
    "ANTHROPIC_API_KEY", "INPUT_ANTHROPIC_API_KEY", "INPUT_GITHUB_TOKEN", "GITHUB_TOKEN", "GH_TOKEN",
    "CI_AGENT_GITLAB_TOKEN", "CI_AGENT_WEBHOOK_SECRET", "ACTIONS_RUNTIME_TOKEN",
    "ACTIONS_ID_TOKEN_REQUEST_TOKEN", "ACTIONS_ID_TOKEN_REQUEST_URL",
})


def build_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """The environment of the build/verify command: ours, minus ci-agent's own secrets."""
    return {k: v for k, v in environ.items() if k.upper() not in _OWN_SECRETS}


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
    """Run `command` in `workdir` (when given), read `logs` and the result files matching
    `result_globs` (relative globs are taken in `workdir`), distill them into one report."""
    inputs: list[Input] = []
    result: proc.Result | None = None
    started: float | None = None
    if command:
        started = time.time()
        result = proc.run(list(command), cwd=workdir, timeout=timeout_s, env=build_environment(os.environ))
        inputs.append(_command_input(result))
    globs = [g if os.path.isabs(g) else str(workdir / g) for g in result_globs]
    paths = expand_inputs(list(logs), sys.stderr) + _fresh(expand_inputs(globs, sys.stderr), started)
    inputs += read_inputs(paths, None, False)
    git_root = str(root or workdir)
    report = distill(inputs, None, resolve_roots(inputs, None, git_root))
    if result is not None and not result.ok and not (report.failures or any(
            d.severity is Severity.ERROR for d in report.diagnostics)):
        # Nothing we recognise, yet it failed: the exit status and the last lines are the report.
        how = (f"timed out after {timeout_s:g} s" if result.timed_out
               else f"exited with code {result.returncode}")
        error = RunError(describe(result.argv), f"`{describe(result.argv)}` {how}\n{_tail(result)}")
        report = replace(report, run_errors=(*report.run_errors, error))
    return Collected(report, fingerprint(report), result)
