"""Apply a policed patch all or nothing, roll it back, commit it with trailers.

`git apply` checks every hunk of every file before it writes anything, so a patch that does not
fit leaves the tree alone. What remains is a failure while writing (a full disk, a permission):
for that the index tree and the bytes of every touched file are saved first and put back, so the
working tree and the index end up exactly as they were whatever happens.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ci_agent import git
from ci_agent.config import CommitSettings
from ci_agent.errors import CiAgentError


class ApplyError(CiAgentError):
    """git refused or failed to apply a patch; the tree is as it was before."""


@dataclass(frozen=True, slots=True)
class TreeSnapshot:
    """Everything a patch could change: status, both diffs, the index, every file's bytes."""

    status: str
    worktree_diff: str
    index_diff: str
    index: str
    files: tuple[tuple[str, str], ...]


def snapshot(repo: Path) -> TreeSnapshot:
    files: list[tuple[str, str]] = []
    for root, dirs, names in os.walk(repo):
        dirs[:] = sorted(d for d in dirs if not (root == str(repo) and d == ".git"))
        for name in sorted(names) + [d for d in dirs if os.path.islink(os.path.join(root, d))]:
            full = os.path.join(root, name)
            rel = os.path.relpath(full, repo)
            if os.path.islink(full):
                files.append((rel, "link:" + os.readlink(full)))
            else:
                data = Path(full).read_bytes()
                files.append((rel, f"{os.stat(full).st_mode:o}:{hashlib.sha256(data).hexdigest()}"))
        # empty directories count too: a failed apply must not leave one behind
        if not names and not dirs and root != str(repo):
            files.append((os.path.relpath(root, repo) + "/", "dir"))
    # `git diff` refreshes racily-clean index entries and writes the index back (GIT_OPTIONAL_LOCKS
    # does not stop it): the snapshot would change what it measures. Its git reads therefore run
    # on a private copy of the index.
    index = Path(repo, git.git_path(repo, "index"))
    with tempfile.TemporaryDirectory(prefix="ci-agent-snapshot-") as scratch:
        private = Path(scratch, "index")
        if index.exists():
            shutil.copyfile(index, private)
        env = {"GIT_INDEX_FILE": str(private)}
        return TreeSnapshot(
            status=git.status_v2(repo, env=env),
            worktree_diff=git.diff(repo, env=env),
            index_diff=git.diff(repo, cached=True, env=env),
            index=git.git_ok(repo, ["ls-files", "--stage", "-z"], env=env),
            files=tuple(sorted(files)),
        )


@dataclass(frozen=True, slots=True)
class _Saved:
    path: str
    data: bytes | None
    mode: int
    times_ns: tuple[int, int] = (0, 0)  # (atime, mtime): the index's stat data must match again


def _save(repo: Path, paths: Iterable[str]) -> tuple[list[_Saved], set[str]]:
    saved: list[_Saved] = []
    existing_dirs: set[str] = set()
    for rel in dict.fromkeys(paths):
        full = repo / rel
        if full.is_file() and not full.is_symlink():
            info = full.stat()
            saved.append(_Saved(rel, full.read_bytes(), info.st_mode, (info.st_atime_ns, info.st_mtime_ns)))
        elif not (full.exists() or full.is_symlink()):
            saved.append(_Saved(rel, None, 0))
        # anything else (a directory, a symlink) git apply refuses to touch: leave it alone
        for parent in Path(rel).parents:
            if (repo / parent).is_dir():
                existing_dirs.add(parent.as_posix())
    return saved, existing_dirs


def _restore(repo: Path, saved: list[_Saved], existing_dirs: set[str]) -> None:
    for item in saved:
        try:
            _restore_one(repo, item, existing_dirs)
        except OSError as error:
            if item.data is not None:  # a file we must put back: that is a real failure
                raise ApplyError(f"could not restore {item.path}: {error.strerror or error}") from error
            # a file that did not exist and whose name the file system refuses was never created


def _restore_one(repo: Path, item: _Saved, existing_dirs: set[str]) -> None:
    full = repo / item.path
    if item.data is None:  # it did not exist: remove what the failed apply created
        if full.is_dir() and not full.is_symlink():
            shutil.rmtree(full)
        elif full.exists() or full.is_symlink():
            full.unlink()
        for parent in Path(item.path).parents:
            if parent.as_posix() not in existing_dirs and (repo / parent).is_dir():
                try:
                    (repo / parent).rmdir()
                except OSError:
                    break
    else:
        if full.is_symlink() or full.is_dir():
            full.unlink() if full.is_symlink() else shutil.rmtree(full)
        full.parent.mkdir(parents=True, exist_ok=True)
        full.write_bytes(item.data)
        os.chmod(full, item.mode & 0o7777)
        # Same bytes but a new mtime would make the restored index entry look stale, and
        # `git apply --index` refuses a file whose stat data does not match the index.
        os.utime(full, ns=item.times_ns)


_ERROR_LINE = re.compile(r"^(error|fatal|warning): ", re.M)


def git_complaint(stderr: str) -> str:
    """git's error lines, without the noise around them, for a message to the model."""
    lines = [line for line in stderr.splitlines() if _ERROR_LINE.match(line)]
    return "\n".join(lines or stderr.strip().splitlines()[:10])[:2000]


def check(repo: Path, patch_text: str, *, reverse: bool = False) -> str | None:
    """None when the patch applies cleanly to the tree and the index, else git's complaint."""
    result = git.apply(repo, patch_text, check=True, reverse=reverse)
    return None if result.ok else git_complaint(result.stderr or result.stdout) or "git apply failed"


def apply_atomically(repo: Path, patch_text: str, paths: Iterable[str], *, reverse: bool = False) -> None:
    """Apply (or with `reverse`, undo) `patch_text` to the work tree and the index, or raise
    ApplyError with both exactly as they were. `paths` are every path the patch names."""
    complaint = check(repo, patch_text, reverse=reverse)
    if complaint is not None:
        raise ApplyError(complaint)
    index = Path(repo, git.git_path(repo, "index"))
    lock = Path(repo, git.git_path(repo, "index.lock"))
    index_bytes = index.read_bytes() if index.exists() else None
    lock_was_there = lock.exists()
    saved, existing_dirs = _save(repo, paths)
    try:
        result = git.apply(repo, patch_text, reverse=reverse)
    except BaseException:
        _put_back(repo, (index, index_bytes), saved, existing_dirs)
        raise
    if not result.ok:
        if result.timed_out and not lock_was_there and lock.exists():
            lock.unlink()  # left by the git we killed, not by anyone else
        _put_back(repo, (index, index_bytes), saved, existing_dirs)
        raise ApplyError(git_complaint(result.stderr) or "git apply failed or timed out")


def _put_back(repo: Path, index: tuple[Path, bytes | None], saved: list[_Saved],
              existing_dirs: set[str]) -> None:
    """The index file byte for byte (flags, intent-to-add entries and all), then the files."""
    path, data = index
    if data is None:
        path.unlink(missing_ok=True)
    else:
        temporary = path.with_name(path.name + ".ci-agent-restore")
        temporary.write_bytes(data)
        os.replace(temporary, path)
    _restore(repo, saved, existing_dirs)


def rollback(repo: Path, patch_text: str, paths: Iterable[str]) -> None:
    """Undo an applied patch (`git apply --reverse --check`, then `--reverse`), all or nothing."""
    apply_atomically(repo, patch_text, paths, reverse=True)


@dataclass(frozen=True, slots=True)
class Trailers:
    attempt: int
    failure: str = ""
    run: str = ""

    def pairs(self) -> list[tuple[str, str]]:
        out = [("CI-Agent-Attempt", str(self.attempt))]
        if self.failure:
            out.append(("CI-Agent-Failure", _one_line(self.failure)))
        if self.run:
            out.append(("CI-Agent-Run", _one_line(self.run)))
        return out


def _one_line(value: str) -> str:
    return " ".join("".join(c if c.isprintable() else " " for c in value).split())[:200]


# Our own trailers are the attempt budget's durable state: nobody else may write them, least
# of all a model's summary ending in "CI-Agent-Attempt: 0".
_OWN_TRAILER = re.compile(r"^\s*ci-agent-[\w-]*\s*[:=#]", re.I | re.M)


def commit(repo: Path, settings: CommitSettings, message: str, trailers: Trailers) -> str:
    """Commit the index with the configured identity and the ci-agent trailers; the new id."""
    message = "\n".join(line for line in message.split("\n") if not _OWN_TRAILER.match(line))
    subject, _, body = message.strip().partition("\n")
    text = _one_line(subject) or "ci-agent: fix the failing build"
    if body.strip():
        text += "\n\n" + body.strip()
    full = git.add_trailers(repo, text + "\n", trailers.pairs())
    identity = git.Identity(settings.author_name, settings.author_email)
    return git.commit(repo, full, identity, no_verify=settings.no_verify)
