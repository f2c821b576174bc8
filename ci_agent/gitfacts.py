"""Facts from git for the model: a one-paragraph status summary and the failing commit's diff.

Both are read with the pinned `ci_agent.git` helpers (argv only, timeouts) and come back as raw
text; the caller (`ci_agent.context`) sanitises, redacts and bounds them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ci_agent.git import GitError, git, git_ok

_MAX_LISTED_PATHS = 10


@dataclass(frozen=True, slots=True)
class Status:
    branch: str | None  # None: detached HEAD
    oid: str | None  # None: no commit yet
    upstream: str | None
    ahead: int
    behind: int
    staged: tuple[str, ...]
    modified: tuple[str, ...]
    untracked: tuple[str, ...]
    conflicted: tuple[str, ...]


def parse_status(out: str) -> Status:
    """`git status --porcelain=v2 --branch -z` output -> Status (paths as git printed them)."""
    branch = oid = upstream = None
    ahead = behind = 0
    staged: list[str] = []
    modified: list[str] = []
    untracked: list[str] = []
    conflicted: list[str] = []
    records = out.split("\0")
    i = 0
    while i < len(records):
        record = records[i]
        i += 1
        if record.startswith("# branch.oid "):
            value = record[len("# branch.oid "):]
            oid = None if value == "(initial)" else value
        elif record.startswith("# branch.head "):
            value = record[len("# branch.head "):]
            branch = None if value == "(detached)" else value
        elif record.startswith("# branch.upstream "):
            upstream = record[len("# branch.upstream "):]
        elif record.startswith("# branch.ab "):
            parts = record.split()
            ahead, behind = abs(int(parts[2])), abs(int(parts[3]))
        elif record.startswith(("1 ", "2 ")):
            fields = record.split(" ", 9 if record[0] == "2" else 8)
            xy, path = fields[1], fields[-1]
            if record[0] == "2":
                i += 1  # a rename's original path is the next NUL-separated record
            if xy[0] != ".":
                staged.append(path)
            if xy[1] != ".":
                modified.append(path)
        elif record.startswith("u "):
            conflicted.append(record.split(" ", 10)[-1])
        elif record.startswith("? "):
            untracked.append(record[2:])
    return Status(branch, oid, upstream, ahead, behind, tuple(staged), tuple(modified),
                  tuple(untracked), tuple(conflicted))


def read_status(repo: Path) -> Status:
    return parse_status(git_ok(repo, ["status", "--porcelain=v2", "--branch", "-z"]))


def _listed(paths: Sequence[str]) -> str:
    shown = ", ".join(paths[:_MAX_LISTED_PATHS])
    more = len(paths) - _MAX_LISTED_PATHS
    return shown + (f" and {more} more" if more > 0 else "")


def summarize_status(status: Status) -> str:
    head = f"branch {status.branch}" if status.branch else "detached HEAD"
    parts = [f"{head} at {status.oid[:12]}" if status.oid else f"{head} (no commits yet)"]
    if status.upstream:
        parts.append(f"upstream {status.upstream} (ahead {status.ahead}, behind {status.behind})")
    kinds = [("conflicted", status.conflicted), ("staged", status.staged),
             ("modified", status.modified), ("untracked", status.untracked)]
    changes = [f"{len(paths)} {name}: {_listed(paths)}" for name, paths in kinds if paths]
    parts.append("working tree: " + ("; ".join(changes) if changes else "clean"))
    return "; ".join(parts) + "."


def _pathspec(glob: str) -> str:
    """Our glob (gitignore-like: no `/` = any depth) as a git exclude pathspec."""
    glob = glob.lstrip("/") if glob.startswith("/") else glob
    if "/" not in glob:
        glob = "**/" + glob
    return f":(exclude,glob,icase){glob}"


@dataclass(frozen=True, slots=True)
class CommitDiff:
    base: str
    revision: str
    against: str  # "its parent", "the merge base with origin/main", "the empty tree"
    text: str


def _rev(repo: Path, spec: str) -> str | None:
    result = git(repo, ["rev-parse", "--verify", "--quiet", "--end-of-options", f"{spec}^{{commit}}"])
    return result.stdout.strip() if result.ok and result.stdout.strip() else None


def commit_diff(repo: Path, revision: str = "HEAD", base_ref: str | None = None,
                exclude: Sequence[str] = ()) -> tuple[CommitDiff | None, str | None]:
    """The diff of `revision` against its parent (first parent for a merge; the empty tree for a
    root commit) or against its merge base with `base_ref`. Returns (diff, note for the model)."""
    rev = _rev(repo, revision)
    if rev is None:
        return None, f"no commit {revision!r} to diff"
    note = None
    base = against = None
    if base_ref:
        result = git(repo, ["merge-base", "--end-of-options", base_ref, rev])
        if result.ok and result.stdout.strip():
            base, against = result.stdout.split()[0], f"the merge base with {base_ref}"
        else:
            note = f"base ref {base_ref!r} not found or unrelated; showing the diff against the parent"
    if base is None:
        parent = _rev(repo, f"{rev}^1")
        if parent is not None:
            base, against = parent, "its parent"
        else:
            base = git_ok(repo, ["hash-object", "-t", "tree", "/dev/null"]).strip()
            against = "the empty tree (root commit)"
    args = ["diff", "--no-color", "--no-ext-diff", "-M", base, rev, "--", ".", *map(_pathspec, exclude)]
    try:
        text = git_ok(repo, args)
    except GitError as exc:
        return None, f"the commit diff could not be read: {exc}"
    return CommitDiff(base, rev, against or "its parent", text), note


def split_file_diffs(text: str) -> list[tuple[str, str]]:
    """A diff split into (path, section) per file, in order (path from the `diff --git` line)."""
    sections: list[tuple[str, str]] = []
    starts = [0] if text.startswith("diff --git ") else []
    pos = text.find("\ndiff --git ")
    while pos >= 0:
        starts.append(pos + 1)
        pos = text.find("\ndiff --git ", pos + 1)
    for n, start in enumerate(starts):
        end = starts[n + 1] if n + 1 < len(starts) else len(text)
        section = text[start:end]
        header = section.split("\n", 1)[0]
        path = header.rsplit(" b/", 1)[-1] if " b/" in header else header[len("diff --git "):]
        sections.append((path, section))
    return sections
