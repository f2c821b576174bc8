"""Find the `/ci-agent <command>` a PR/MR comment gives, the way a reader of the rendered comment
would see it: only a line the author typed as a line of text counts. Lines inside fenced code,
block quotes (and their lazy continuation lines), HTML comments and indented code never do, so a
status comment or a reply that quotes a command can never start one. Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass

from ci_agent.redact import sanitize_untrusted
from ci_agent.slash.request import SlashCommand

MAX_BODY = 65536  # a longer body is read up to here only (GitHub caps comments at 65536 too)
MAX_ARGS = 4000
MAX_UNKNOWN = 64

# Up to 3 spaces of indentation (4 is indented code), the namespaced prefix, then a space/tab or
# the end of the line: `/ci-agentx` is not ours, and GitLab quick actions (`/assign`) never match.
_COMMAND_RE = re.compile(r" {0,3}/ci-agent(?:[ \t]+(.*))?", re.IGNORECASE)
_FENCE_RE = re.compile(r" {0,3}(`{3,}|~{3,})(.*)")
_QUOTE_RE = re.compile(r" {0,3}>")
# Trailing punctuation people type after a name ("/ci-agent fix: ...") is not part of it.
_NAME_PUNCTUATION = ":,.;!?"


@dataclass
class _Scan:
    """Markdown block state carried from line to line."""

    fence: str = ""  # the opening fence ("```", "~~~~"...) while inside fenced code
    in_comment: bool = False  # inside an HTML comment at the start of the next line
    in_quote: bool = False  # a block quote paragraph is open: a plain next line continues it


def parse_command(body: str, commands: Collection[str]) -> SlashCommand | None:
    """The FIRST command of `body`, or None when it holds none. `commands` are the names the
    handler table knows (`ci_agent.slash.table.COMMANDS`, passed in so that reading a comment
    never loads the handlers): any other word is `help`, with the word kept in `unknown`."""
    lines = _bounded(body).replace("\r\n", "\n").replace("\r", "\n").split("\n")
    scan = _Scan()
    for index, line in enumerate(lines):
        rest = _command_rest(scan, line)
        if rest is not None:
            return _command(rest, _continuation(scan, lines[index + 1:]), commands)
    return None


def holds_command(body: str) -> bool:
    """Whether `body` holds a `/ci-agent` line at all, whatever its word (an unknown one is
    answered with help): what the relay and the poller ask before starting a command job."""
    return parse_command(body, ()) is not None


def _bounded(body: str) -> str:
    """`body` up to MAX_BODY characters, without the line the cut goes through: a cut
    `/ci-agent status` must not read as another word."""
    if len(body) <= MAX_BODY:
        return body
    head = body[:MAX_BODY]
    if body[MAX_BODY] in "\r\n":
        return head
    return head[: max(head.rfind("\n"), head.rfind("\r")) + 1]


def _command_rest(scan: _Scan, line: str) -> str | None:
    """Advance `scan` past `line`; the text after `/ci-agent` when the line is a command line."""
    if scan.fence:
        if _closes_fence(scan.fence, line):
            scan.fence = ""
        return None
    starts_in_comment = scan.in_comment
    scan.in_comment = _comment_open_after(line, scan.in_comment)
    if starts_in_comment:
        return None
    if not line.strip():
        scan.in_quote = False
        return None
    fence = _FENCE_RE.fullmatch(line)
    if fence and not (fence.group(1)[0] == "`" and "`" in fence.group(2)):
        scan.fence, scan.in_quote = fence.group(1), False
        scan.in_comment = False  # `<!--` inside code is literal
        return None
    if _QUOTE_RE.match(line):
        scan.in_quote = bool(line.lstrip(" ")[1:].strip())
        return None
    match = _COMMAND_RE.fullmatch(line)
    if match is None or scan.in_quote:
        return None  # a plain line after a quote is that quote's lazy continuation
    return match.group(1) or ""


def _closes_fence(opening: str, line: str) -> bool:
    match = _FENCE_RE.fullmatch(line)
    return (match is not None and match.group(1)[0] == opening[0]
            and len(match.group(1)) >= len(opening) and not match.group(2).strip())


def _comment_open_after(line: str, open_: bool) -> bool:
    """Whether an HTML comment is still open at the end of `line`. Markers inside inline code
    count too: hiding a command by mistake is the safe side."""
    pos = 0
    while True:
        marker = "-->" if open_ else "<!--"
        found = line.find(marker, pos)
        if found < 0:
            return open_
        pos, open_ = found + len(marker), not open_


def _continuation(scan: _Scan, following: list[str]) -> list[str]:
    """The lines after a command line that belong to its arguments: up to a blank line or the
    next command line."""
    taken: list[str] = []
    total = 0
    for line in following:
        if not line.strip() or _command_rest(scan, line) is not None or total > MAX_ARGS:
            break
        taken.append(line)
        total += len(line) + 1
    return taken


def _command(rest: str, more: list[str], commands: Collection[str]) -> SlashCommand:
    word, tail = _split_word(rest)
    args = _clean_args("\n".join([tail, *more]))
    if not word:
        return SlashCommand("help", args)
    name = word.lower().rstrip(_NAME_PUNCTUATION)
    if name in commands:
        return SlashCommand(name, args)
    unknown = sanitize_untrusted(word).replace("\n", " ")[:MAX_UNKNOWN]
    return SlashCommand("help", args, unknown=unknown)


def _split_word(rest: str) -> tuple[str, str]:
    parts = rest.strip(" \t").split(None, 1)
    if not parts:
        return "", ""
    return parts[0], parts[1] if len(parts) > 1 else ""


def _clean_args(text: str) -> str:
    return sanitize_untrusted(text).strip()[:MAX_ARGS].strip()
