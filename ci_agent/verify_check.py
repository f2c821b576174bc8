"""Whether a verify command can run here, asked twice: before the model is called (its program
must exist, or the money is spent for nothing) and after it ran (a timeout, exit 126/127 or a
kill says nothing about the patch: the command could not run).

Both answers are one sentence naming the command; the callers decide what the sentence costs
(exit 2 before the model call; a durable record after it, so a rerun never pays again).
"""

from __future__ import annotations

import os
import posixpath
import shlex
import shutil
import signal
from collections.abc import Callable, Sequence
from pathlib import Path

from ci_agent import git, proc

# git tree modes that a program can be started from: an executable file, or a symbolic link
# (whose target decides; the run says so if it is not one).
_RUNNABLE_MODES = ("100755", "120000")


def missing_program(argv: Sequence[str], path: str | None,
                    tree_mode: Callable[[str], str | None]) -> str | None:
    """Why `argv[0]` cannot be started, or None when it can. A bare name is looked up on `path`
    (the job's PATH); an absolute path must be an executable file; a relative path is inside the
    work tree, so it must be an executable file in the tree of the revision being fixed
    (`tree_mode(repo-relative path)` gives its git mode, None when absent)."""
    if not argv:
        return None
    program = argv[0]
    shown = shlex.quote(program)
    if "/" not in program:
        if shutil.which(program, path=path) is None:
            return f"{shown} is not installed in this job (not found on its PATH)"
        return None
    if os.path.isabs(program):
        if not (os.path.isfile(program) and os.access(program, os.X_OK)):
            return f"{shown} is not an executable file in this job"
        return None
    relative = posixpath.normpath(program)
    if relative == ".." or relative.startswith("../"):
        return f"{shown} points outside the repository"
    mode = tree_mode(relative)
    if mode is None:
        return f"{shown} is not a file in the repository"
    if mode not in _RUNNABLE_MODES:
        return f"{shown} is not executable in the repository (git mode {mode})"
    return None


def tree_mode_at(repo: str | Path, revision: str) -> Callable[[str], str | None]:
    """`tree_mode` for `missing_program`: the git mode of a path in `revision`'s tree."""
    def mode(path: str) -> str | None:
        out = git.git(repo, ["ls-tree", "-z", revision, "--", path])
        if not out.ok:
            return None
        for entry in out.stdout.split("\0"):
            meta, _, name = entry.partition("\t")
            if name == path and meta:
                return meta.split(" ", 1)[0]
        return None
    return mode


def could_not_run(result: proc.Result, timeout_s: float) -> str:
    """Why a command that ran tells nothing about the patch ("" when its result is a verdict):
    it timed out, its program could not be executed (126) or found (127, as a shell reports
    it), or it was killed (a signal, or 137: SIGKILL as a shell reports it, often memory)."""
    name = shlex.join(result.argv)
    if result.timed_out:
        return f"`{name}` timed out after {timeout_s:g} s"
    code = result.returncode
    if code == 126:
        return f"`{name}` could not be executed (exit 126)"
    if code == 127:
        return f"`{name}` could not find a program it runs (exit 127)"
    if code < 0 or code == 128 + signal.SIGKILL:
        number = -code if code < 0 else signal.SIGKILL
        try:
            what = signal.Signals(number).name
        except ValueError:
            what = f"signal {number}"
        return f"`{name}` was killed ({what}; out of memory, or the job was stopped)"
    return ""
