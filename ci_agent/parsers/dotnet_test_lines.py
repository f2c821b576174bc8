"""Line shapes of `dotnet test` output and the failure bodies they introduce (pure functions).

Used by `dotnet_test`; split out so the consumer's state machine reads on its own. Every parser
here is linear in the line length: hostile lines must not trigger regex backtracking.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ci_agent.report import Outcome, TestCase

MAX_BLOCK_LINES = 400  # body lines kept per failure (message + stack + output)
MAX_LINE_KEPT = 4096

_DUR = r"(?:<\s*)?\d+(?:[.,]\d+)?\s*(?:ms|s|m|h)(?:\s+\d+(?:[.,]\d+)?\s*(?:ms|s|m|h))*"
_DUR_RE = re.compile(_DUR)
# Result words of the VSTest console logger; `X`/`√` are 16.x's markers. Parsed by hand, not by a
# regex, because a lazy name followed by `\s+\[` is quadratic on hostile whitespace runs.
_VS_WORDS = ("Failed", "X", "Passed", "Skipped", "√", "!")
# Resource `TestRunSummary` in any language: a word ending in `!`, a dash, then four `label: n`
# pairs in resource order (failed, passed, skipped, total). Quotes: pasted into prose.
VS_SUMMARY_RE = re.compile(
    r"(?:^|[\s\"'])\w[^!\n]{0,40}!\s*[-–—]\s*"
    r"[^:,]{1,40}:\s*(\d+)\s*[,，]\s*[^:,]{1,40}:\s*(\d+)\s*[,，]\s*"
    r"[^:,]{1,40}:\s*(\d+)\s*[,，]\s*[^:,]{1,40}:\s*(\d+)"
)
_TL_NAME_RE = re.compile(rf"^(?P<name>.+?) \((?P<dur>{_DUR})\):\s*(?P<rest>.*)$")
MTP_WORDS = ("failed ", "timed out ", "cancelled ", "canceled ", "skipped ", "passed ")
_MTP_FROM_RE = re.compile(r"^\s*from \S.*\([^()|]*\|[^()]*\)\s*$")
FRAME_RE = re.compile(r"^\s*(?:at |--- |\d+\)\s+at )")
_DURATION_PART_RE = re.compile(r"(\d+(?:[.,]\d+)?)\s*(ms|s|m|h)\b")
_UNIT_SECONDS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}


@dataclass(slots=True)
class Pending:
    """The one failure being read."""

    name: str
    outcome: Outcome = Outcome.FAILED
    duration_s: float | None = None
    file: str | None = None
    line: int | None = None
    indent: int = 0
    lines: list[str] = field(default_factory=list)  # raw body (TL / MTP / xUnit)
    message: list[str] = field(default_factory=list)  # VSTest sections
    stack: list[str] = field(default_factory=list)
    stdout: list[str] = field(default_factory=list)
    kept: int = 0
    dropped: int = 0

    def keep(self, target: list[str], line: str) -> None:
        if self.kept < MAX_BLOCK_LINES:
            self.kept += 1
            target.append(line[:MAX_LINE_KEPT])
        else:
            self.dropped += 1


def parse_duration(text: str | None) -> float | None:
    """`39 ms`, `< 1 ms`, `6s 764ms`, `1m 45s 448ms`, `0,8s` -> seconds; None if unreadable."""
    if not text or len(text) > 40:
        return None
    if text.lstrip().startswith("<"):
        return 0.0
    parts = _DURATION_PART_RE.findall(text)
    if not parts:
        return None
    return round(sum(float(num.replace(",", ".")) * _UNIT_SECONDS[unit] for num, unit in parts), 6)


def vs_result(line: str) -> tuple[str, str, str] | None:
    """`  Failed <name> [<dur>]` -> (word, name, dur); the duration is the last `[..]` group."""
    text = line.rstrip()
    if not text.endswith("]") or indent_of(text) > 4:
        return None
    open_at = text.rfind("[")
    dur = text[open_at + 1:-1].strip()
    if open_at < 0 or len(dur) > 40 or not _DUR_RE.fullmatch(dur):
        return None
    word, _, name = text[:open_at].strip().partition(" ")
    name = name.strip()
    return (word, name, dur) if word in _VS_WORDS and name else None


def mtp_result(line: str, mtp_seen: bool = False) -> tuple[int, str, str, str | None] | None:
    """`failed <name> (<dur>)` -> (indent, word, name, dur).

    Newer MTP may omit the duration; a `failed <text>` line without one is only taken once the log
    showed MTP output (`Running tests from`), since `failed to ...` is common prose.
    """
    text = line.rstrip()
    stripped = text.lstrip()
    word = next((w for w in MTP_WORDS if stripped.startswith(w)), None)
    if word is None:
        return None
    name, dur = stripped[len(word):].strip(), None
    if word == "failed " and name.startswith("(") and ") " in name[:14]:  # `failed (canceled) X`
        qualifier, _, name = name.partition(") ")
        word = f"failed {qualifier})"
    if name.endswith(")") and " (" in name:
        cut = name.rindex(" (")
        if len(name) - cut < 44 and _DUR_RE.fullmatch(name[cut + 2:-1]):
            name, dur = name[:cut].rstrip(), name[cut + 2:-1]
    if not name or (dur is None and word != "skipped " and not mtp_seen):
        return None
    return len(text) - len(stripped), word.strip(), name, dur


def indent_of(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def join_lines(lines: list[str]) -> str | None:
    start, end = 0, len(lines)
    while start < end and not lines[start].strip():
        start += 1
    while end > start and not lines[end - 1].strip():
        end -= 1
    return "\n".join(lines[start:end]) if end > start else None


def frames(lines: list[str]) -> str | None:
    """Stack text without the printer's indentation (it carries no meaning)."""
    return join_lines([x.strip() for x in lines])


def _dedent(lines: list[str]) -> list[str]:
    widths = [indent_of(x) for x in lines if x.strip()]
    cut = min(widths) if widths else 0
    return [x[cut:] for x in lines]


def tl_case(p: Pending) -> TestCase:
    """Body of `error TESTERROR:`: `Name (dur):[ Error Message: m]`, message lines, `Stack Trace:`."""
    body, name, rest, dur, at = p.lines, "", "", None, -1
    joined = ""
    for i in range(min(3, len(body))):  # the terminal may have wrapped a long name
        joined += body[i].strip()
        m = _TL_NAME_RE.match(joined)
        if m:
            name, rest, dur, at = m.group("name"), m.group("rest"), m.group("dur"), i
            break
    if not name:
        name = f"(unnamed test failure at {p.file}({p.line}))" if p.file else "(unnamed test failure)"
    message: list[str] = []
    stack: list[str] = []
    msg_indent = indent_of(body[at]) if at >= 0 else 0
    if rest.startswith("Error Message:"):
        rest = rest[len("Error Message:"):].strip()
    if rest:
        message.append(rest)
    target = message
    for raw in body[at + 1:]:
        text = raw.strip()
        if text == "Stack Trace:":
            target = stack
        elif target is message and text.startswith("Error Message:"):
            msg_indent = indent_of(raw)
            if text[len("Error Message:"):].strip():
                message.append(text[len("Error Message:"):].strip())
        elif target is message:
            message.append(raw[msg_indent:] if indent_of(raw) >= msg_indent else raw.lstrip())
        else:
            stack.append(raw)
    return TestCase(name, p.outcome, message=join_lines(message), stack=frames(stack), file=p.file,
                    line=p.line, duration_s=parse_duration(dur))


def mtp_case(p: Pending) -> TestCase:
    before: list[str] = []
    after: list[str] = []
    stack: list[str] = []
    seen_from = False
    for raw in p.lines:
        if not stack and raw.strip() == "Stack Trace:":  # banner of newer reporters
            stack.append("")
        elif stack or FRAME_RE.match(raw):
            stack.append(raw)
        elif not seen_from and _MTP_FROM_RE.match(raw):
            seen_from = True
        else:
            (after if seen_from else before).append(raw)
    # Newer MTP prints the message before *and* after `from <dll>`; the copy after is indented whole.
    message = after if seen_from and any(x.strip() for x in after) else before + after
    return TestCase(p.name, p.outcome, message=join_lines(_dedent(message)), stack=frames(stack),
                    duration_s=p.duration_s)


def xunit_case(p: Pending) -> TestCase:
    split = next((i for i, x in enumerate(p.lines) if x.strip() == "Stack Trace:"), len(p.lines))
    return TestCase(p.name, p.outcome, message=join_lines(_dedent(p.lines[:split])),
                    stack=frames(p.lines[split + 1:]))


def vs_banner(line: str) -> str | None:
    """`  Error Message:` / `  Stack Trace:` / `  Standard Output Messages:` -> the banner, else None."""
    text = line.strip()
    if text in ("Error Message:", "Stack Trace:") or (text.endswith(" Messages:") and len(text) < 48):
        return text if indent_of(line) <= 4 else None
    return None


def is_vs_boundary(line: str) -> bool:
    """A line that ends the VSTest failure block being read: the next event."""
    if line.startswith(("[xUnit.net ", "Results File:", "Test Run ", "Test run for ", "A total of ",
                        "Starting test execution", "VSTest version", "Total tests:")):
        return True
    if line.endswith("]") and vs_result(line):
        return True
    return "!" in line and VS_SUMMARY_RE.search(line) is not None
