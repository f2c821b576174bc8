"""A small typed model of a unified diff, and the Rejection every check of it returns.

The engine never hands git the text it received: parse.py reads it into this model, the checks
police the model, and render.py writes the model back, so git only acts on what was policed.
"""

from __future__ import annotations

from dataclasses import dataclass

NULL_PATH = "/dev/null"


@dataclass(frozen=True, slots=True)
class Rejection:
    """Why (part of) a patch may not land; `message` is written for the model that sent it."""

    rule: str
    path: str
    message: str

    def to_json(self) -> dict[str, str]:
        return {"rule": self.rule, "path": self.path, "message": self.message}


@dataclass(frozen=True, slots=True)
class Hunk:
    old_start: int
    new_start: int
    # Each line keeps its prefix (' ', '+', '-' or '\\' for "No newline at end of file") and no
    # line terminator; a '\r' of a CRLF file stays part of the content.
    lines: tuple[str, ...]
    section: str = ""

    @property
    def old_count(self) -> int:
        return sum(1 for line in self.lines if line[:1] in (" ", "-"))

    @property
    def new_count(self) -> int:
        return sum(1 for line in self.lines if line[:1] in (" ", "+"))

    @property
    def added(self) -> int:
        return sum(1 for line in self.lines if line[:1] == "+")

    @property
    def removed(self) -> int:
        return sum(1 for line in self.lines if line[:1] == "-")


@dataclass(frozen=True, slots=True)
class FilePatch:
    old_path: str | None  # None: the file is created
    new_path: str | None  # None: the file is deleted
    hunks: tuple[Hunk, ...] = ()
    old_mode: str | None = None
    new_mode: str | None = None
    rename: bool = False
    copy: bool = False
    binary: bool = False
    # Every path the headers named (diff --git, ---/+++, rename/copy from/to), all policed.
    mentioned: tuple[str, ...] = ()

    @property
    def path(self) -> str:
        return self.new_path or self.old_path or ""

    @property
    def is_new(self) -> bool:
        return self.old_path is None

    @property
    def is_deleted(self) -> bool:
        return self.new_path is None

    @property
    def added(self) -> int:
        return sum(h.added for h in self.hunks)

    @property
    def removed(self) -> int:
        return sum(h.removed for h in self.hunks)

    @property
    def modes(self) -> tuple[str, ...]:
        return tuple(m for m in (self.old_mode, self.new_mode) if m)


@dataclass(frozen=True, slots=True)
class Patch:
    files: tuple[FilePatch, ...]

    @property
    def added(self) -> int:
        return sum(f.added for f in self.files)

    @property
    def removed(self) -> int:
        return sum(f.removed for f in self.files)

    @property
    def paths(self) -> tuple[str, ...]:
        return tuple(f.path for f in self.files)


# A hunk whose `@@` header gave no line numbers: the start is found in the file (extract.py).
UNKNOWN_START = -1
