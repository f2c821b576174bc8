"""Facts from git for the model: a one-paragraph status summary and the change under test (its
range, commit messages, changed files and their patches).

All are read with the pinned `ci_agent.git` helpers (argv only, timeouts) and come back as raw
text; the caller (`ci_agent.context`) filters, ranks, sanitises, redacts and bounds them. The
change is read with `core.quotePath=off`, no colour, no external diff and no textconv: a
repository's `.gitattributes` must not be able to run a program when we read its history.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ci_agent.git import git, git_ok

_MAX_COMMITS = 10  # commit messages read for a PR range (the newest)

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


# `-c` before the subcommand, after `ci_agent.git`'s own pins (the last one wins): paths printed
# as they are (names with control characters stay C-quoted); never a program from the repository.
_READ = ("-c", "core.quotePath=off", "-c", "color.diff=false")
_DIFF_FLAGS = ("--no-color", "--no-ext-diff", "--no-textconv", "-M")


@dataclass(frozen=True, slots=True)
class ChangeRange:
    """The change under test: `base`..`revision`, described for the model by `against`."""

    base: str
    revision: str
    against: str  # "its parent", "the merge base with origin/main", "the empty tree (root commit)"
    root: bool = False  # no parent: everything in the commit is new (an initial import)


@dataclass(frozen=True, slots=True)
class ChangedFile:
    path: str
    old_path: str | None  # the path before a rename or copy
    status: str  # git's letter: A, M, D, R, C, T
    added: int | None  # None: binary
    deleted: int | None


@dataclass(frozen=True, slots=True)
class CommitMessage:
    oid: str
    text: str  # subject, blank line, body, as written (raw; the caller cleans it)


def _rev(repo: Path, spec: str) -> str | None:
    result = git(repo, ["rev-parse", "--verify", "--quiet", "--end-of-options", f"{spec}^{{commit}}"])
    return result.stdout.strip() if result.ok and result.stdout.strip() else None


def _shallow(repo: Path) -> bool:
    return git(repo, ["rev-parse", "--is-shallow-repository"]).stdout.strip() == "true"


def change_range(repo: Path, revision: str = "HEAD",
                 base_ref: str | None = None) -> tuple[ChangeRange | None, str | None]:
    """The change under test, and a note for the model: `revision` against its merge base with
    `base_ref` (a pull request), else against its parent (first parent of a merge), else the
    empty tree (a root commit). A merge base equal to `revision` (the commit is on the base
    branch itself) falls back to the parent; so does a missing base ref, with a note."""
    rev = _rev(repo, revision)
    if rev is None:
        return None, f"no commit {revision!r} to diff"
    note = None
    if base_ref:
        result = git(repo, ["merge-base", "--end-of-options", base_ref, rev])
        base = result.stdout.split()[0] if result.ok and result.stdout.strip() else None
        if base is None:
            note = f"base ref {base_ref!r} not found or unrelated; showing the diff against the parent"
        elif base != rev:
            return ChangeRange(base, rev, f"the merge base with {base_ref}"), None
    parent = _rev(repo, f"{rev}^1")
    if parent is not None:
        return ChangeRange(parent, rev, "its parent"), note
    if _shallow(repo):
        return None, "the parent of the failing commit is not in this shallow clone; no diff shown"
    empty = git_ok(repo, ["hash-object", "-t", "tree", "/dev/null"]).strip()
    return ChangeRange(empty, rev, "the empty tree (root commit)", root=True), note


def parse_raw(out: str) -> list[tuple[str, str, str | None]]:
    """`git diff --raw -z` -> (status letter, path, old path of a rename/copy), in git's order."""
    fields = out.split("\0")
    found: list[tuple[str, str, str | None]] = []
    i = 0
    while i < len(fields) and fields[i].startswith(":"):
        status = fields[i].split()[-1][:1]
        if status in "RC":
            found.append((status, fields[i + 2], fields[i + 1]))
            i += 3
        else:
            found.append((status, fields[i + 1], None))
            i += 2
    return found


def parse_numstat(out: str) -> list[tuple[int | None, int | None]]:
    """`git diff --numstat -z` -> (added, deleted) per file in git's order; None for binary."""
    fields = out.split("\0")
    found: list[tuple[int | None, int | None]] = []
    i = 0
    while i < len(fields) and fields[i].count("\t") >= 2:
        added, deleted, path = fields[i].split("\t", 2)
        found.append((int(added) if added.isdigit() else None, int(deleted) if deleted.isdigit() else None))
        i += 1 if path else 3  # a rename's two paths follow as their own fields
    return found


def changed_files(repo: Path, change: ChangeRange, exclude: Sequence[str] = ()) -> list[ChangedFile]:
    """The files the change touches (exclude globs left out), in git's order."""
    spec = ["--", ".", *map(_pathspec, exclude)]
    raw = parse_raw(git_ok(repo, [*_READ, "diff", *_DIFF_FLAGS, "--raw", "-z", change.base, change.revision,
                                  *spec]))
    counts = parse_numstat(git_ok(repo, [*_READ, "diff", *_DIFF_FLAGS, "--numstat", "-z", change.base,
                                         change.revision, *spec]))
    if len(counts) != len(raw):  # never expected; counts unknown rather than misattributed
        counts = [(None, None)] * len(raw)
    return [ChangedFile(path, old, status, added, deleted)
            for (status, path, old), (added, deleted) in zip(raw, counts, strict=True)]


def file_patches(repo: Path, change: ChangeRange, files: Sequence[ChangedFile]) -> list[str] | None:
    """The patch text of each of `files` (one `diff --git` section each, in the same order), or
    None when git's answer does not line up with them."""
    if not files:
        return []
    paths = [p for f in files for p in (f.path, f.old_path) if p is not None]
    text = git_ok(repo, [*_READ, "diff", *_DIFF_FLAGS, "--patch", change.base, change.revision, "--",
                         *(f":(literal){p}" for p in paths)])
    sections = split_file_diffs(text)
    return [section for _, section in sections] if len(sections) == len(files) else None


def commit_messages(repo: Path, change: ChangeRange) -> tuple[list[CommitMessage], int]:
    """The messages of the commits in the change, newest first (at most `_MAX_COMMITS`), and how
    many commits it has: one for a commit against its parent."""
    single = change.root or _rev(repo, f"{change.revision}^1") == change.base
    spec = change.revision if single else f"{change.base}..{change.revision}"
    count = 1 if single else int(git_ok(repo, ["rev-list", "--count", "--end-of-options", spec]).strip() or 0)
    out = git_ok(repo, [*_READ, "log", "-z", "--no-color", f"--max-count={1 if single else _MAX_COMMITS}",
                        "--format=%H%x1f%B", "--end-of-options", spec])
    messages = []
    for record in out.split("\0"):
        oid, sep, text = record.partition("\x1f")
        if sep:
            messages.append(CommitMessage(oid.strip(), text.strip("\n")))
    return messages, count


def split_file_diffs(text: str) -> list[tuple[str, str]]:
    """A diff split into (path, section) per file, in order (path from the `diff --git` line).
    A line of a patch's content starts with ` `, `+`, `-` or `\\`, so a line starting with
    `diff --git ` is always a header, whatever the files contain."""
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
