"""The one way ci-agent runs another program: an argv list (never a shell), a timeout that
kills the whole process tree, and the output captured as text.
"""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ci_agent.errors import CiAgentError


@dataclass(frozen=True, slots=True)
class Result:
    argv: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str
    timed_out: bool = False

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out


def run(
    argv: Sequence[str],
    cwd: str | Path | None = None,
    timeout: float = 60.0,
    env: Mapping[str, str] | None = None,
    stdin: str | None = None,
    *,
    user: int | None = None,
    group: int | None = None,
    umask: int = -1,
) -> Result:
    """Run `argv` and wait at most `timeout` seconds.

    `user`/`group` (numeric ids; only root may pass them) run the program as that account with no
    supplementary groups, which is how ci_agent/sandbox.py drops privileges for untrusted code.

    A missing program raises CiAgentError (a message for the user, not a traceback). On timeout
    the process group is killed so grandchildren (git's helpers, a shell's children) die too,
    and the result says `timed_out` with returncode -9.
    """
    try:
        proc = subprocess.Popen(
            list(argv),
            cwd=cwd,
            env=dict(env) if env is not None else None,
            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,  # its own process group, so we can kill the tree
            user=user,
            group=group,
            extra_groups=[] if user is not None else None,  # not root's groups
            umask=umask,
        )
    except FileNotFoundError as exc:
        raise CiAgentError(f"cannot run {argv[0]!r}: program not found") from exc
    except PermissionError as exc:
        raise CiAgentError(f"cannot run {argv[0]!r}: permission denied{_as(user)}") from exc
    except NotADirectoryError as exc:
        raise CiAgentError(f"cannot run {argv[0]!r}: working directory {cwd} does not exist") from exc
    try:
        out, err = proc.communicate(stdin.encode() if stdin is not None else None, timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_tree(proc)
        out, err = proc.communicate()
        return Result(tuple(argv), -9, _text(out), _text(err), timed_out=True)
    return Result(tuple(argv), proc.returncode, _text(out), _text(err))


def _as(user: int | None) -> str:
    return "" if user is None else f" for the sandbox user (uid {user}); give a program every user can run"


def _kill_tree(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()


def _text(data: bytes | None) -> str:
    return (data or b"").decode("utf-8", errors="replace")
