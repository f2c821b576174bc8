"""The model's read-only view of the repository: read_file, search_code, list_files.

Every path is resolved with realpath and must stay inside the repository's realpath, so `..`
and symlinks pointing out are refused; `.git` (any depth, any case) and the configured exclude
globs are invisible — a hidden file answers exactly like a missing one. Output is capped so
one tool call cannot flood the conversation. Errors are `ToolError`s whose message is written
for the model (worded in `ci_agent/templates/tools.md.j2`); the loop sends them back as
`is_error` tool results. What each tool takes is its schema in `tools.json` (`tool_schemas`).
"""

from __future__ import annotations

import fnmatch
import os
import re
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from ci_agent import exact
from ci_agent.llm.tool_schemas import parameter_types, required_parameters
from ci_agent.patch.policy import glob_match
from ci_agent.render.prose import Prose

MAX_OUTPUT_BYTES = 48_000
MAX_READ_LINES = 400
MAX_FILE_BYTES = 2_000_000  # larger files are not read or searched
MAX_MATCHES = 100
MAX_LIST_ENTRIES = 400
MAX_PATTERN = 300
SEARCH_SECONDS = 5.0
SEARCH_LINE_CHARS = 2_000  # longer lines (minified code, data) are skipped by search
# A quantified group that itself holds a quantifier or an alternation, e.g. (a+)+, (\w*x)*,
# (a|aa)+: the classic catastrophic-backtracking shapes. Python's `re` has no timeout, so such
# patterns are refused (a heuristic: it also refuses some harmless ones, like (foo|bar)+).
_NESTED_QUANTIFIER = re.compile(r"\((?:[^()\\]|\\.)*[+*}|](?:[^()\\]|\\.)*\)\s*[+*{]")
_SAY = Prose("tools.md.j2")


def _unchanged(text: str) -> str:
    return text


class ToolError(Exception):
    """A tool call the model made that cannot be answered; the message says why."""


def is_git_dir(name: str) -> bool:
    return name.casefold().rstrip(". ") == ".git"


def _cap(text: str, line_range: bool = False) -> str:
    data = text.encode("utf-8", "replace")
    if len(data) <= MAX_OUTPUT_BYTES:
        return text
    cut = data[:MAX_OUTPUT_BYTES].decode("utf-8", "ignore")
    cut = cut[: cut.rfind("\n") + 1] or cut
    return cut + _SAY("truncated", most=MAX_OUTPUT_BYTES, line_range=line_range) + "\n"


class RepoTools:
    def __init__(self, repo: Path, exclude_globs: Iterable[str] = (),
                 redact: Callable[[str], str] = _unchanged) -> None:
        """`redact` is applied to file text before special characters are marked, so lines a
        secret was cut from can be named (the loop redacts every result again)."""
        self.repo = Path(os.path.realpath(repo))
        self.exclude_globs = tuple(exclude_globs)
        self.redact = redact

    # -- path confinement -------------------------------------------------------------------

    def _excluded(self, rel: str, is_dir: bool = False) -> bool:
        if any(is_git_dir(part) for part in rel.split("/")):
            return True
        # A directory is excluded when a glob matches it or anything below it ("build/**"). Case
        # folded, as the patch policy and the context do: `.ENV` is a secrets file on any disk
        # that ignores case, and excluding one file too many is the safe mistake.
        return any(glob_match(rel, g, fold_case=True) or (is_dir and glob_match(rel + "/", g,
                   fold_case=True)) for g in self.exclude_globs)

    def resolve(self, path: str, *, want_dir: bool = False) -> tuple[Path, str]:
        """(real absolute path, repo-relative POSIX path) for a path the model named."""
        raw = (path or ".").replace("\\", "/").strip()
        if "\x00" in raw:
            raise ToolError(_SAY("nul_in_path"))
        if raw.startswith("/") or re.match(r"^[A-Za-z]:", raw):
            raise ToolError(_SAY("absolute", path=path))
        lexical = os.path.normpath(raw).replace("\\", "/")
        if lexical == ".." or lexical.startswith("../"):
            raise ToolError(_SAY("outside", path=path))
        real = Path(os.path.realpath(self.repo / lexical))
        if real != self.repo and self.repo not in real.parents:
            raise ToolError(_SAY("symlink_out", path=path))
        rel = real.relative_to(self.repo).as_posix() if real != self.repo else "."
        hidden = rel != "." and self._excluded(rel, is_dir=real.is_dir())
        # The lexical path may name a hidden place through a symlink inside the repo too.
        hidden = hidden or (lexical != "." and self._excluded(lexical, is_dir=real.is_dir()))
        if hidden or not real.exists():
            raise ToolError(_SAY("missing", path=path))
        if want_dir and not real.is_dir():
            raise ToolError(_SAY("not_a_directory", path=path))
        if not want_dir and not real.is_file():
            raise ToolError(_SAY("a_directory", path=path))
        return real, rel

    def _walk(self, top: Path) -> Iterator[tuple[Path, str]]:
        """Visible files under `top`, sorted, never following symlinks out of the repository."""
        for dirpath, dirnames, filenames in os.walk(top, followlinks=False):
            base = Path(dirpath)
            rel_dir = base.relative_to(self.repo).as_posix()
            prefix = "" if rel_dir == "." else rel_dir + "/"
            dirnames[:] = sorted(d for d in dirnames
                                 if not (base / d).is_symlink() and not self._excluded(prefix + d, True))
            for name in sorted(filenames):
                full = base / name
                rel = prefix + name
                if self._excluded(rel):
                    continue
                real = Path(os.path.realpath(full))
                if real != full and (self.repo not in real.parents
                                     or self._excluded(real.relative_to(self.repo).as_posix())):
                    continue  # a symlink out of the repository, or into .git or an excluded file
                yield full, rel

    # -- the tools ----------------------------------------------------------------------------

    def read_file(self, path: str, start_line: int | None = None, end_line: int | None = None) -> str:
        real, rel = self.resolve(path)
        size = real.stat().st_size
        if size > MAX_FILE_BYTES:
            raise ToolError(_SAY("too_large", path=rel, size=size))
        data = real.read_bytes()
        if b"\x00" in data[:8192]:
            raise ToolError(_SAY("binary", path=rel))
        # Lines as git counts them, shown exactly as excerpts show them (`exact`).
        lines, _ = exact.split_lines(data.decode("utf-8", "replace"))
        first = max(1, start_line or 1)
        last = min(len(lines), end_line or len(lines), first + MAX_READ_LINES - 1)
        if lines and first > len(lines):
            raise ToolError(_SAY("past_the_end", path=rel, lines=len(lines), first=first))
        shown, redacted = exact.show_lines(lines[first - 1:last], self.redact, first)
        body = "".join(f"{n:>6}\t{line}\n" for n, line in enumerate(shown, first))
        header = _SAY("lines_header", path=rel, first=first, last=last, total=len(lines)) + "\n"
        more = (_SAY("more_lines", count=len(lines) - last, next_line=last + 1) + "\n"
                if last < len(lines) else "")
        cut = _SAY("redacted_lines", numbers=sorted(redacted)) + "\n" if redacted else ""
        return _cap(header + body, line_range=True) + more + cut

    def search_code(self, pattern: str, glob: str | None = None, regex: bool = False) -> str:
        if not pattern or len(pattern) > MAX_PATTERN:
            raise ToolError(_SAY("pattern_length", most=MAX_PATTERN))
        if regex and _NESTED_QUANTIFIER.search(pattern):
            raise ToolError(_SAY("nested_quantifier"))
        try:
            matcher = re.compile(pattern if regex else re.escape(pattern))
        except re.error as error:
            raise ToolError(_SAY("bad_regex", error=error)) from error
        marked = exact.OPEN in pattern
        deadline = time.monotonic() + SEARCH_SECONDS
        hits: list[str] = []
        stopped = ""
        for full, rel in self._walk(self.repo):
            if full.is_symlink() or (glob and not _glob_hit(rel, glob)):
                continue  # a symlink's target is searched under its own name
            if time.monotonic() > deadline:
                stopped = _SAY("search_stopped", seconds=SEARCH_SECONDS) + "\n"
                break
            for number, line in _text_lines(full):
                # (a pattern with a marker, copied from what the model was shown, finds its line)
                if len(line) <= SEARCH_LINE_CHARS and (matcher.search(line) or (
                        marked and matcher.search(exact.mark(line)))):
                    hits.append(f"{rel}:{number}: {self._hit(line)}\n")
                    if len(hits) >= MAX_MATCHES:
                        break
            if len(hits) >= MAX_MATCHES:
                stopped = _SAY("first_matches", count=MAX_MATCHES) + "\n"
                break
        if not hits:
            return _SAY("no_matches", pattern=pattern, glob=glob) + "\n"
        return _cap("".join(hits)) + stopped

    def _hit(self, line: str) -> str:
        """A matching line redacted, cut to 300 characters, then marked as excerpts are."""
        return exact.mark(self.redact(line.strip())[:300])

    def list_files(self, dir: str | None = None, glob: str | None = None) -> str:
        top, rel_top = self.resolve(dir or ".", want_dir=True)
        entries: list[str] = []
        more = 0
        for _full, rel in self._walk(top):
            if glob and not _glob_hit(rel, glob):
                continue
            if len(entries) < MAX_LIST_ENTRIES:
                entries.append(rel + "\n")
            else:
                more += 1
        if not entries:
            return _SAY("no_files", dir=rel_top, glob=glob) + "\n"
        tail = _SAY("more_files", count=more) + "\n" if more else ""
        return _cap("".join(entries)) + tail

    def call(self, name: str, arguments: Mapping[str, Any]) -> str:
        """Run the tool `name`; raises ToolError for unknown tools and bad arguments."""
        handlers: dict[str, Callable[..., str]] = {
            "read_file": self.read_file, "search_code": self.search_code, "list_files": self.list_files,
        }
        handler = handlers.get(name)
        if handler is None:
            raise ToolError(_SAY("no_such_tool", name=name))
        params = parameter_types(name)
        unknown = sorted(set(arguments) - set(params))
        if unknown:
            raise ToolError(_SAY("no_such_parameter", tool=name, name=unknown[0]))
        for key, kind in params.items():
            value = arguments.get(key)
            if value is not None and not (isinstance(value, kind) and not
                                          (kind is int and isinstance(value, bool))):
                raise ToolError(_SAY("wrong_type", tool=name, name=key, kind=kind.__name__))
        missing = [k for k in required_parameters(name) if not arguments.get(k)]
        if missing:
            raise ToolError(_SAY("needs", tool=name, name=missing[0]))
        return handler(**{k: v for k, v in arguments.items() if v is not None})


def _glob_hit(rel: str, glob: str) -> bool:
    # "*.py" matches by file name at any depth; "src/**/*.py" matches the path.
    return glob_match(rel, glob, fold_case=False) or fnmatch.fnmatchcase(rel, glob)


def _text_lines(path: Path) -> Iterator[tuple[int, str]]:
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            return
        data = path.read_bytes()
    except OSError:
        return
    if b"\x00" in data[:8192]:
        return
    yield from enumerate(exact.split_lines(data.decode("utf-8", "replace"))[0], 1)
