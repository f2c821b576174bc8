"""The repository's own guidance for coding agents, for the cached system prompt (issue 15).

Many repositories tell agents how to work in them: `AGENTS.md` (read by many agents, GitLab Duo
among them), `CLAUDE.md` (Claude Code), `.github/copilot-instructions.md` (GitHub Copilot) and
`.gitlab/duo/chat-rules.md` (GitLab Duo's project rules). That is stable text the model can use
(how to build, conventions, layout), and it belongs in the cached prefix of every request.

It is read where the configuration is read (`ci_agent.engine.trusted`): in CI from the default
branch as origin has it, never from the branch being fixed, whose author could otherwise write
the model's instructions for the run made on their own failure; `fix --local` reads the working
tree, as it does `.ci-agent.yml`. `context.repository_guidance: false` turns it off.

Bounded: the files share `GUIDANCE_BYTES`, in the order above; a file cut or left out says so.
Only regular files are read (a symbolic link, common for `CLAUDE.md -> AGENTS.md`, is skipped),
and a file whose text repeats an earlier one is not shown twice. What is read here is raw:
the prompt redacts, sanitises and fences it as data (`ci_agent.llm.prompt`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from ci_agent import git
from ci_agent.config import GUIDANCE_FILES, GuidanceFile, Settings

GUIDANCE_BYTES = 12_000
_FILE_MODES = ("100644", "100755")
# A file's text: None when it is absent or not a regular file.
Reader = Callable[[str], str | None]


def _cut(text: str, limit: int) -> str:
    """The first `limit` bytes of `text`, ending at a line end when there is one."""
    head = text.encode("utf-8")[:limit].decode("utf-8", errors="ignore")
    lines, newline, _ = head.rpartition("\n")
    return lines + newline if newline else head


def read_guidance(read: Reader, budget: int = GUIDANCE_BYTES) -> tuple[GuidanceFile, ...]:
    """The guidance files `read` finds, in `GUIDANCE_FILES` order, within `budget` bytes."""
    found: list[GuidanceFile] = []
    seen: set[str] = set()
    left = budget
    for path in GUIDANCE_FILES:
        text = read(path)
        if text is None or not text.strip() or text.strip() in seen:
            continue
        seen.add(text.strip())
        size = len(text.encode("utf-8"))
        if left <= 0:
            found.append(GuidanceFile(path, "", size, f"not shown ({size} bytes): the {budget}-byte "
                                                      "budget for repository guidance was used up"))
            continue
        shown = text if size <= left else _cut(text, left)
        used = len(shown.encode("utf-8"))
        note = "" if used == size else f"the first {used} of {size} bytes; the rest was cut"
        found.append(GuidanceFile(path, shown, size, note))
        left -= used
    return tuple(found)


def at_revision(repo: Path, revision: str) -> Reader:
    """A reader of regular files in `revision`'s tree (the trusted ref in CI)."""

    def read(path: str) -> str | None:
        listed = git.git(repo, ["ls-tree", "-z", revision, "--", path])
        entry = next((e for e in listed.stdout.split("\0") if e.partition("\t")[2] == path), "")
        if not listed.ok or entry.split(" ", 1)[0] not in _FILE_MODES:
            return None
        shown = git.git(repo, ["cat-file", "blob", f"{revision}:{path}"])
        return shown.stdout if shown.ok else None

    return read


def in_work_tree(repo: Path) -> Reader:
    """A reader of regular files in the working tree (`fix --local`, as `.ci-agent.yml` is)."""
    root = repo.resolve()

    def read(path: str) -> str | None:
        file = root / path
        if file.is_symlink() or not file.is_file() or not file.resolve().is_relative_to(root):
            return None
        try:
            return file.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None

    return read


def with_guidance(settings: Settings, read: Reader) -> Settings:
    """`settings` with the guidance `read` finds (none when `context.repository_guidance` is off)."""
    if not settings.context.repository_guidance:
        return replace(settings, context=replace(settings.context, guidance=()))
    return replace(settings, context=replace(settings.context, guidance=read_guidance(read)))
