"""Nothing ci-agent prints on a GitHub runner becomes a workflow command (issue 12).

The runner reads every line of a step's stdout and stderr for commands in two grammars
(actions/runner `ActionCommand`): `::name args::value` at the start of the line after optional
whitespace (.NET `TrimStart`), and the legacy `##[name args]value` ANYWHERE in the line. Lines
break at `\\n`, `\\r\\n` and a bare `\\r` (`StreamReader.ReadLine`). Log text, test names and
the model's words are printed by many verbs, so instead of trusting each print site, `main`
wraps `sys.stdout` and `sys.stderr` once (`install`) in a `CommandGuard` that rewrites
every line it passes on:

- a line whose first non-blank characters are `::` gets look-alike ratio signs (`∶∶`);
- every `##[` becomes `##［` (a fullwidth bracket), wherever it is.

Our own deliberate commands (`::add-mask::`, annotations) go through `emit_commands`, which
checks that each line is one of ours and still neutralises `##[` inside it (escaped annotation
data can carry it). A write that ends mid-line holds back the few characters that could still
turn into a command with the next write (`  :`, a trailing `#` or `##`), so splitting a line
across writes changes nothing. Streams redirected to a regular file are not wrapped: the runner
never reads them, and `distill --output json > report.json` stays byte-exact.
"""

from __future__ import annotations

import io
import os
import re
import stat
import sys
from collections.abc import Mapping
from typing import TextIO

# .NET Char.IsWhiteSpace, which TrimStart uses, minus the line breaks handled as breaks.
_NET_SPACE = "\t\x0b\x0c\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
_LINE_START_RE = re.compile(f"^([{_NET_SPACE}]*)::")
_HOLD_AT_START_RE = re.compile(f"[{_NET_SPACE}]*:?")
_LEGACY = "##["
_LEGACY_SAFE = "##\uff3b"
_BREAK_RE = re.compile(r"\r\n|\r|\n")


_COMMAND_START = re.compile(r"^(\s*)::")


def log_line(text: str) -> str:
    """Untrusted text made safe for the log: control characters gone, and a line that would be
    read as a workflow command (`::set-output`, `::add-mask`, `::stop-commands` ...) has its
    leading `::` replaced by look-alike ratio signs, so the runner shows it as text."""
    safe = re.sub("[\x00-\x08\x0b-\x1f\x7f\u2028\u2029]", " ", text)
    return "\n".join(_COMMAND_START.sub(lambda m: m.group(1) + "\u2236\u2236", line)
                     for line in safe.split("\n"))


def neutralise_line(line: str, at_start: bool = True) -> str:
    """One line (no break in it) as the runner will show it but never run it."""
    line = line.replace(_LEGACY, _LEGACY_SAFE)
    if at_start:
        line = _LINE_START_RE.sub(lambda m: m.group(1) + "\u2236\u2236", line)
    return line


def neutralise(text: str) -> str:
    """Every line of `text` neutralised (line breaks kept as they were)."""
    parts = _BREAK_RE.split(text)
    breaks = _BREAK_RE.findall(text)
    out = [neutralise_line(parts[0])]
    for brk, part in zip(breaks, parts[1:], strict=True):
        out += [brk, neutralise_line(part)]
    return "".join(out)


class CommandGuard(io.TextIOBase):
    """A text stream that passes everything to `raw` with every line neutralised."""

    def __init__(self, raw: TextIO) -> None:
        super().__init__()
        self.raw = raw
        self._buf = ""  # the part of the current line not yet passed on
        self._mid = False  # part of the current line was already passed on (its start was checked)

    def writable(self) -> bool:
        return True

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return "utf-8"

    def isatty(self) -> bool:
        return self.raw.isatty()

    def fileno(self) -> int:
        return self.raw.fileno()

    def write(self, s: str) -> int:
        self._buf += s
        parts = _BREAK_RE.split(self._buf)
        breaks = _BREAK_RE.findall(self._buf)
        if breaks:
            out = []
            for part, brk in zip(parts, breaks, strict=False):
                out.append(neutralise_line(part, not self._mid) + brk)
                self._mid = False
            self._raw_write("".join(out))
            # A `\r` at the very end may be the first half of `\r\n`: fine either way, both break.
            self._buf = parts[-1]
        return len(s)

    def flush(self) -> None:
        """Pass on the partial line, except the characters that could still form a command."""
        buf = self._buf
        if buf and not (not self._mid and _HOLD_AT_START_RE.fullmatch(buf)):
            hold = len(buf) - len(buf.rstrip("#"))
            hold = min(hold, 2)
            emit, self._buf = buf[:len(buf) - hold], buf[len(buf) - hold:]
            if emit:
                self._raw_write(neutralise_line(emit, not self._mid))
                self._mid = True
        self.raw.flush()

    def finish(self) -> None:
        """At exit: whatever is held back goes out (it can no longer form a command)."""
        if self._buf:
            self._raw_write(neutralise_line(self._buf, not self._mid))
            self._buf, self._mid = "", True
        self.raw.flush()

    def write_commands(self, text: str) -> None:
        """Our own `::command::` lines, each checked, legacy `##[` still neutralised."""
        self.finish()
        if self._mid:
            self._raw_write("\n")
            self._mid = False
        self._raw_write(_commands(text))
        self.raw.flush()

    def _raw_write(self, text: str) -> None:
        buffer = getattr(self.raw, "buffer", None)
        if buffer is not None:  # UTF-8 whatever the console's code page; lone surrogates as `?`
            self.raw.flush()
            buffer.write(text.encode("utf-8", errors="replace"))
        else:
            self.raw.write(text)


def _commands(text: str) -> str:
    lines = text.split("\n")
    for line in lines:
        if line and not line.startswith("::"):
            raise ValueError(f"not a workflow command: {line[:40]!r}")
    return "\n".join(line.replace(_LEGACY, _LEGACY_SAFE) for line in lines)


def emit_commands(stream: TextIO, text: str) -> None:
    """Write workflow command lines of ours (masks, annotations) to `stream`."""
    if isinstance(stream, CommandGuard):
        stream.write_commands(text)
        return
    stream.write(_commands(text))
    stream.flush()


def _is_file(stream: TextIO) -> bool:
    try:
        return stat.S_ISREG(os.fstat(stream.fileno()).st_mode)
    except (OSError, ValueError, io.UnsupportedOperation):
        return False


def install(env: Mapping[str, str]) -> list[CommandGuard]:
    """Wrap `sys.stdout` and `sys.stderr` when the GitHub runner reads them (idempotent)."""
    if env.get("GITHUB_ACTIONS") != "true":
        return []
    guards = []
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if isinstance(stream, CommandGuard) or _is_file(stream):
            continue
        guard = CommandGuard(stream)
        setattr(sys, name, guard)
        guards.append(guard)
    return guards


def uninstall(guards: list[CommandGuard]) -> None:
    for guard in guards:
        guard.finish()
        for name in ("stdout", "stderr"):
            if getattr(sys, name) is guard:
                setattr(sys, name, guard.raw)
