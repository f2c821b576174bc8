"""The file-system half of the sandbox (ci_agent/sandbox.py): the work tree's copy the sandbox
user owns, the private paths hidden from it while it runs, and reading its result files back
without following a link it planted.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import stat
from collections.abc import Iterator, Sequence
from pathlib import Path

from ci_agent import proc
from ci_agent.errors import CiAgentError

# The copy's one commit: made without any system/global git config (no hooks, filters or helpers
# of ours run over the patched tree) and with a fixed identity.
_SNAPSHOT_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_TERMINAL_PROMPT": "0",
    "GIT_AUTHOR_NAME": "ci-agent", "GIT_AUTHOR_EMAIL": "ci-agent@localhost",
    "GIT_COMMITTER_NAME": "ci-agent", "GIT_COMMITTER_EMAIL": "ci-agent@localhost",
    "GIT_AUTHOR_DATE": "2000-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2000-01-01T00:00:00Z",
    "LC_ALL": "C", "PATH": os.defpath,
}


def copy_work_tree(source: Path, target: Path) -> None:
    """The files of `source` (links kept as links, never followed) without its `.git`, which in a
    worktree is a pointer into the real repository and in a checkout is the repository itself."""
    shutil.copytree(source, target, symlinks=True,
                    ignore=lambda folder, names: [".git"] if Path(folder) == source else [])


def snapshot_repository(work: Path, home: Path, timeout: float) -> None:
    """A fresh repository with the copy as its one commit, so tools that read git metadata
    (setuptools-scm, SourceLink, `go build`'s VCS stamp) keep working. It has no remote, no
    credentials and no history of the real one. A failure only costs those tools their metadata."""
    env = {**_SNAPSHOT_ENV, "HOME": str(home), "PATH": os.environ.get("PATH", os.defpath)}
    for argv in (["git", "init", "-q", "-b", "ci-agent"], ["git", "add", "-A"],
                 ["git", "-c", "commit.gpgsign=false", "commit", "-q", "--no-verify", "-m", "snapshot"]):
        try:
            result = proc.run(argv, cwd=work, timeout=timeout, env=env)
        except CiAgentError:
            result = None
        if result is None or not result.ok:
            shutil.rmtree(work / ".git", ignore_errors=True)
            return


def chown_tree(root: Path, uid: int, gid: int) -> None:
    """Hand `root` and everything in it to uid/gid; links themselves, never what they point at."""
    os.chown(root, uid, gid, follow_symlinks=False)
    for folder, dirs, files in os.walk(root):
        for name in (*dirs, *files):
            os.chown(os.path.join(folder, name), uid, gid, follow_symlinks=False)


def private_paths(workdir: Path, home: str | None) -> list[Path]:
    """What must stay unreadable to the sandbox user while it runs: the real repository's git
    directory (its config holds the credentialed remote / `http.extraheader` actions/checkout
    leaves), every config file that config includes (checkout's credentials file), and ci-agent's
    own HOME (`.git-credentials`, `.netrc`, registry logins)."""
    found: list[Path] = []
    common = proc_git(workdir, ["rev-parse", "--path-format=absolute", "--git-common-dir"])
    if common:
        found.append(Path(common))
    origins = proc_git(workdir, ["config", "--local", "--includes", "--show-origin", "--name-only",
                                 "--list", "-z"])
    for chunk in (origins or "").split("\0"):
        if chunk.startswith("file:"):  # git prints the repository's own config relative to workdir
            found.append(Path(workdir, chunk[len("file:"):]))
    if home and Path(home).is_dir() and Path(home).resolve() not in _SHARED_DIRS:
        found.append(Path(home))
    return list(dict.fromkeys(p.resolve() for p in found if p.exists()))


# Folders everyone needs: never made private, whatever HOME says.
_SHARED_DIRS = frozenset(Path(p) for p in ("/", "/tmp", "/var/tmp", "/usr", "/home", "/dev"))


def proc_git(workdir: Path, args: Sequence[str]) -> str:
    try:
        result = proc.run(["git", *args], cwd=workdir, timeout=60,
                          env={**os.environ, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"})
    except CiAgentError:
        return ""
    return result.stdout.strip() if result.ok else ""


@contextlib.contextmanager
def hidden(paths: Sequence[Path], keep_reachable: Path) -> Iterator[None]:
    """Take group and other permissions off `paths` for the duration (the owner keeps access, so
    a crash in between leaves nothing broken for the checkout's owner); restored afterwards.
    A path above `keep_reachable` (the sandbox's own folder) is left alone."""
    changed: list[tuple[Path, int]] = []
    try:
        for path in paths:
            if keep_reachable.is_relative_to(path):
                continue
            mode = stat.S_IMODE(os.lstat(path).st_mode)
            if mode & 0o077:
                os.chmod(path, mode & 0o700, follow_symlinks=False)
                changed.append((path, mode))
        yield
    finally:
        for path, mode in reversed(changed):
            with contextlib.suppress(OSError):
                os.chmod(path, mode, follow_symlinks=False)


def reachable_by_others(path: Path) -> bool:
    """Every folder from / to `path` lets a user who is neither owner nor group through."""
    current = path.resolve()
    return all(os.stat(folder).st_mode & stat.S_IXOTH for folder in (current, *current.parents))


def glob_regex(pattern: str) -> re.Pattern[str]:
    """A relative glob (`**` any number of folders, `*`/`?` within one name, `[...]`) as a regex
    over POSIX relative paths, for matching while walking the copy ourselves (glob.glob would
    follow the links the sandbox user planted)."""
    text = pattern.replace("\\", "/")
    while text.startswith("./"):
        text = text[2:]
    parts = text.split("/")
    out: list[str] = []
    for index, part in enumerate(parts):
        last = index == len(parts) - 1
        if part == "**":
            out.append(".*" if last else "(?:[^/]+/)*")
            continue
        i = 0
        while i < len(part):
            ch = part[i]
            if ch == "*":
                out.append("[^/]*")
            elif ch == "?":
                out.append("[^/]")
            elif ch == "[" and (end := part.find("]", i + 2)) != -1:
                body = part[i + 1:end]
                out.append("[" + ("^" + body[1:] if body.startswith("!") else body) + "]")
                i = end
            else:
                out.append(re.escape(ch))
            i += 1
        if not last:
            out.append("/")
    return re.compile("".join(out) + r"\Z")


def harvest(copy: Path, globs: Sequence[str], into: Path, max_bytes: int) -> list[str]:
    """Copy the regular files under `copy` that match `globs` into `into` (ours, 0700), each
    opened one component at a time without following links, so a result path the sandbox turned
    into a link to a private file reads nothing. Sorted per glob, no repeats; mtimes kept (the
    caller's freshness check reads them)."""
    regexes = [glob_regex(g) for g in globs]
    names: list[str] = []
    for folder, dirs, files in os.walk(copy):  # never follows links to folders
        dirs[:] = sorted(d for d in dirs if d != ".git" or Path(folder) != copy)
        rel_folder = os.path.relpath(folder, copy)
        for name in files:
            names.append(name if rel_folder == "." else f"{rel_folder}/{name}")
    found: list[str] = []
    for regex in regexes:
        for rel in sorted(n for n in names if regex.match(n)):
            target = into / rel
            if target.exists() or not _copy_regular(copy, rel, target, max_bytes):
                continue
            found.append(str(target))
    return found


def _copy_regular(root: Path, rel: str, target: Path, max_bytes: int) -> bool:
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
    fds: list[int] = []
    try:
        fds.append(os.open(root, flags | os.O_DIRECTORY))
        parts = rel.split("/")
        for part in parts[:-1]:
            fds.append(os.open(part, flags | os.O_DIRECTORY, dir_fd=fds[-1]))
        fd = os.open(parts[-1], flags, dir_fd=fds[-1])
        fds.append(fd)
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return False
        target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        with os.fdopen(os.dup(fd), "rb") as src, open(target, "xb") as out:
            os.set_blocking(src.fileno(), True)
            copied = 0
            while copied < max_bytes and (block := src.read(min(1 << 20, max_bytes - copied))):
                out.write(block)
                copied += len(block)
        os.utime(target, ns=(info.st_atime_ns, info.st_mtime_ns))
        return True
    except OSError:
        return False
    finally:
        for fd in fds:
            os.close(fd)
