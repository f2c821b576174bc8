"""One module per verb; what several verbs share lives here."""

from __future__ import annotations

from pathlib import Path

from ci_agent import git
from ci_agent.errors import UsageError


def repo_root_arg(directory: str) -> Path:
    """The work tree root for a `--repo DIR` argument, or a usage error naming the argument."""
    if not Path(directory).is_dir():
        raise UsageError(f"--repo {directory}: no such directory")
    try:
        return git.toplevel(directory)
    except git.GitError as exc:
        raise UsageError(f"--repo {directory}: not inside a git repository") from exc
