"""Thin typed git functions on top of `proc.run`: argv lists only, a timeout on every call.

Every call pins the few settings that would otherwise make the result depend on the user's or
the repository's configuration (pager, prompts, whitespace handling of `git apply`, message
language), so what the tests see is what CI sees.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict, Unpack

from ci_agent.errors import CiAgentError
from ci_agent.proc import Result, run

DEFAULT_TIMEOUT = 60.0

# `-c` options put before every subcommand. apply.whitespace=nowarn: apply exactly the given
# patch, never "fix" its whitespace behind the reviewer's back; core.quotePath=true: paths in
# git's output are C-quoted ASCII, so parsing them never depends on the terminal's encoding.
# core.checkStat=minimal: a file we restored after a failed apply has its bytes and mtime back
# but a new inode/ctime; with the default check git would call it "does not match index".
_PINNED = ("-c", "core.quotePath=true", "-c", "apply.whitespace=nowarn", "-c", "color.ui=false",
           "-c", "core.checkStat=minimal")


class GitError(CiAgentError):
    """A git command failed; the message carries git's own explanation."""


@dataclass(frozen=True, slots=True)
class Identity:
    name: str
    email: str


def _env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ)
    # GIT_OPTIONAL_LOCKS=0: `git status` must not rewrite the index as a side effect (its stat
    # refresh), or "the index is byte for byte as before" could not be promised or checked.
    env.update({"GIT_TERMINAL_PROMPT": "0", "GIT_PAGER": "cat", "LC_ALL": "C", "LANGUAGE": "C",
                "GIT_OPTIONAL_LOCKS": "0"})
    if extra:
        env.update(extra)
    return env


class GitOptions(TypedDict, total=False):
    """The keyword options of `git`, so that `git_ok` takes exactly the same ones."""

    stdin: str | None
    timeout: float
    env: Mapping[str, str] | None


def git(
    repo: str | Path,
    args: Sequence[str],
    *,
    stdin: str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    env: Mapping[str, str] | None = None,
) -> Result:
    """Run `git ARGS` in `repo` and return the result, whatever the exit code."""
    return run(["git", *_PINNED, *args], cwd=repo, timeout=timeout, env=_env(env), stdin=stdin)


def git_ok(repo: str | Path, args: Sequence[str], **options: Unpack[GitOptions]) -> str:
    """Run `git ARGS` (options as for `git`) and return stdout; raise GitError with git's stderr
    when it fails."""
    result = git(repo, args, **options)
    if result.timed_out:
        raise GitError(f"git {args[0]} timed out after {options.get('timeout', DEFAULT_TIMEOUT):g} s")
    if result.returncode != 0:
        detail = (result.stderr or result.stdout).strip() or f"exit code {result.returncode}"
        raise GitError(f"git {args[0]} failed: {detail}")
    return result.stdout


def toplevel(path: str | Path) -> Path:
    """The root of the work tree containing `path` (GitError when it is not in a repository)."""
    return Path(git_ok(path, ["rev-parse", "--show-toplevel"]).strip())


def work_tree_root(path: str | Path) -> Path | None:
    """Like `toplevel`, but None when `path` is in no work tree or git cannot run there."""
    try:
        return toplevel(path)
    except (GitError, OSError):
        return None


def status_v2(repo: str | Path, *, env: Mapping[str, str] | None = None) -> str:
    """`git status --porcelain=v2` including untracked and ignored files, NUL-separated."""
    return git_ok(repo, ["status", "--porcelain=v2", "-z", "--untracked-files=all", "--ignored"], env=env)


def diff(repo: str | Path, *, cached: bool = False, env: Mapping[str, str] | None = None) -> str:
    args = ["diff", "--no-ext-diff", "--binary"]
    if cached:
        args.append("--cached")
    return git_ok(repo, args, env=env)


def apply(
    repo: str | Path,
    patch: str,
    *,
    check: bool = False,
    reverse: bool = False,
    index: bool = True,
    timeout: float = DEFAULT_TIMEOUT,
) -> Result:
    """`git apply` the patch text given on stdin. git itself applies all files or none."""
    args = ["apply"]
    if check:
        args.append("--check")
    if reverse:
        args.append("--reverse")
    if index:
        args.append("--index")
    args.append("-")
    return git(repo, args, stdin=patch, timeout=timeout)


def git_path(repo: str | Path, name: str) -> str:
    """Where `.git/<name>` really is (worktrees and GIT_DIR move it); relative to `repo`."""
    return git_ok(repo, ["rev-parse", "--git-path", name]).strip()


def write_tree(repo: str | Path) -> str:
    """The tree object of the current index (used to put the index back exactly)."""
    return git_ok(repo, ["write-tree"]).strip()


def read_tree(repo: str | Path, tree: str) -> None:
    git_ok(repo, ["read-tree", tree])


def index_mode(repo: str | Path, path: str) -> str | None:
    """The mode of `path` in the index (e.g. 100644), or None when it is not tracked."""
    out = git_ok(repo, ["ls-files", "--stage", "-z", "--", path])
    for entry in out.split("\0"):
        if entry:
            return entry.split(" ", 1)[0]
    return None


def index_blob(repo: str | Path, path: str) -> bytes | None:
    """The content the index holds for `path` (None when it is not tracked).

    As bytes of the UTF-8 text git printed: a file that is not UTF-8 comes back with
    replacement characters, which is fine for its one use (fitting a patch's line endings).
    """
    result = git(repo, ["cat-file", "blob", f":{path}"])
    return result.stdout.encode("utf-8", errors="surrogateescape") if result.ok else None


def config_get(repo: str | Path, key: str) -> str | None:
    result = git(repo, ["config", "--get", key])
    return result.stdout.strip() if result.returncode == 0 else None


def head(repo: str | Path) -> str:
    return git_ok(repo, ["rev-parse", "HEAD"]).strip()


def add_trailers(repo: str | Path, message: str, trailers: Sequence[tuple[str, str]]) -> str:
    """The message with `Key: value` trailers appended the way git itself formats them."""
    args = ["interpret-trailers", "--where", "end", "--if-exists", "addIfDifferent"]
    for key, value in trailers:
        args += ["--trailer", f"{key}: {value}"]
    return git_ok(repo, args, stdin=message)


def commit(
    repo: str | Path,
    message: str,
    identity: Identity,
    *,
    no_verify: bool = False,
    timeout: float = 120.0,
) -> str:
    """Commit the index with `identity` as author and committer; return the new commit id.

    The identity goes in through the environment so neither the user's nor the repository's
    `user.*` settings can change who the commit claims to be from. Hooks run unless the caller
    explicitly asks for `no_verify` (a configuration choice, never a default).
    """
    env = {
        "GIT_AUTHOR_NAME": identity.name,
        "GIT_AUTHOR_EMAIL": identity.email,
        "GIT_COMMITTER_NAME": identity.name,
        "GIT_COMMITTER_EMAIL": identity.email,
    }
    args = ["commit", "--quiet", "--cleanup=whitespace", "--file", "-"]
    if no_verify:
        args.append("--no-verify")
    git_ok(repo, args, stdin=message, timeout=timeout, env=env)
    return head(repo)


def push(repo: str | Path, remote: str, refspec: str, *, timeout: float = 120.0) -> None:
    git_ok(repo, ["push", "--porcelain", remote, refspec], timeout=timeout)
