"""One module per verb; what several verbs share lives here."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

from ci_agent import git
from ci_agent.errors import CiAgentError, ExitCode, UsageError


def repo_root_arg(directory: str) -> Path:
    """The work tree root for a `--repo DIR` argument, or a usage error naming the argument."""
    if not Path(directory).is_dir():
        raise UsageError(f"--repo {directory}: no such directory")
    try:
        return git.toplevel(directory)
    except git.GitError as exc:
        raise UsageError(f"--repo {directory}: not inside a git repository") from exc


def run_reporting_errors(run: Callable[[], int]) -> int:
    """The one place an error becomes an exit code: run a verb, and for a CiAgentError print
    `ci-agent: error: ...` on stderr and return its exit code (an interrupt is a failure)."""
    try:
        return int(run())
    except CiAgentError as exc:
        print(f"ci-agent: error: {exc}", file=sys.stderr)
        return int(exc.exit_code)
    except KeyboardInterrupt:
        return int(ExitCode.FAILURE)
