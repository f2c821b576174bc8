"""Failed tests grouped by cause: 116 failures that share a few causes are a few problems.

Two failures share a cause when they have the same outcome, the same message *shape* and the same
top project frame (the first frame in the repository, `ReportFailure.frames[0]`: distill already
dropped the runtime's and the test framework's frames). The shape is the message's headline (its
first line and the `--->` lines of inner exceptions: a server's response body or an assertion's
diff below them are values, not the cause) with what varies from test to test replaced by
placeholders: GUIDs, hex ids, timestamps, temp paths, quoted values, numbers, and the test's own
name echoed in the message (MSTest's `Test method X threw exception:`). The exception type is
kept: it is a word, and words are never replaced.

Pure and deterministic: clusters come largest first, then in order of their first member; members
keep the report's order; a cluster's id is a hash of its key, so the same cause has the same id
in every run and every output (the JSON report, the job summary, later the marker).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ci_agent.report import ReportFailure

# Placeholders are written `⟨kind⟩` (or `#` for a number): every rule leaves them as they are, so
# normalising a normalised text changes nothing (tests/test_cluster.py proves it).
_PLACEHOLDER = r"⟨[a-z]+⟩|#"
TEST = "⟨test⟩"
HEADLINE_CHARS = 2000  # beyond this, two messages are one shape (and normalising stays cheap)
MIN_BARE_NAME = 5  # a shorter bare test name (`Add`, `Run`) is too likely an ordinary word

_MSTEST_PREFIX_RE = re.compile(r"^\s*Test method \S+ threw exception:\s*", re.IGNORECASE)
_INNER_EXCEPTION = "--->"
_BLANKS_RE = re.compile(r"\s+")
_TEMP_DIR_RE = re.compile(r"[\\/](?:te?mp|_temp|var[\\/]folders)(?:[\\/]|$)", re.IGNORECASE)
_TRAILING_PUNCTUATION = ".,;:)]}"
_HEX = "[0-9A-Fa-f]"

# Word characters for the rules' boundaries: `\w` and the characters a placeholder begins or ends
# with, so that whether a rule applies next to a token does not change once that token has become
# a placeholder (idempotence).
_W = r"\w#⟨⟩"
# What varies from test to test. Tried left to right, the first alternative that matches wins;
# `keep` matches a placeholder, so a second pass leaves it alone.
_PATTERNS = {
    "keep": _PLACEHOLDER,
    "guid": rf"(?<![{_W}-]){_HEX}{{8}}(?:-{_HEX}{{4}}){{3}}-{_HEX}{{12}}(?![{_W}-])",
    "time": rf"(?<![{_W}.])\d{{4}}-\d\d-\d\d(?:[T ]\d\d:\d\d(?::\d\d(?:[.,]\d+)?)?(?:Z|[+-]\d\d:?\d\d)?)?"
            rf"(?![{_W}.])",
    # `0x1F`, or 8+ hex digits mixing digits and letters (object ids, hashes), not a plain word
    "hex": rf"(?<![{_W}.])(?:0[xX]{_HEX}+|(?={_HEX}*\d)(?={_HEX}*[A-Fa-f]){_HEX}{{8,}})(?![{_W}.])",
    "path": rf"(?<![{_W}.~/\\])(?:[A-Za-z]:[\\/]|/)[^\s'\"`<>|⟨⟩#]+",  # absolute; a temp one is replaced
    # Quoted values hold no placeholder: a second pass must not find a new string around one.
    "str": rf"(?<![{_W}])(?:'[^'#⟨⟩]*'|\"[^\"#⟨⟩]*\"|`[^`#⟨⟩]*`|‘[^’#⟨⟩]*’|“[^”#⟨⟩]*”)(?![{_W}])",
    "value": r"(?<=:)<[^<>#⟨⟩]*>",  # MSTest's `Expected:<3>. Actual:<4>.`
    "number": rf"(?<![{_W}.])[-+]?\d+(?:[.,]\d+)*(?![{_W}])",
}


def _rules(*names: str) -> re.Pattern[str]:
    return re.compile("|".join(f"(?P<{name}>{_PATTERNS[name]})" for name in names))


_MESSAGE_RE = _rules("keep", "guid", "time", "hex", "path", "str", "value", "number")
# Without a frame to anchor it, a message's values are what tells two assertions apart.
_IDS_RE = _rules("keep", "guid", "time", "hex", "path")
_IN_PATH_RE = _rules("keep", "guid", "time", "hex", "number")
# A frame keeps its numbers and strings (a line number is the place) and its paths, bar temp ones.
_FRAME_RE = _rules("keep", "guid", "hex", "path")
_PLACEHOLDER_CHAR_RE = re.compile("[#⟨⟩]")
_WORD_CHAR_RE = re.compile(f"[{_W}]")


def _in_message(match: re.Match[str]) -> str:
    kind = match.lastgroup or "keep"
    text = match.group(0)
    if kind == "keep":
        return text
    if kind == "number":
        return "#"
    if kind == "path":
        body = text.rstrip(_TRAILING_PUNCTUATION)
        if _TEMP_DIR_RE.search(body):
            return "⟨tmp⟩" + text[len(body):]
        return _IN_PATH_RE.sub(_in_message, text)  # another path is kept, but not the ids in it
    return f"⟨{kind}⟩"


def _in_frame(match: re.Match[str]) -> str:
    if match.lastgroup == "path" and not _TEMP_DIR_RE.search(match.group(0)):
        return match.group(0)
    return _in_message(match)


def _without_names(text: str, names: Sequence[str]) -> str:
    """`text` with each of `names` (longest first) replaced by the test placeholder where it stands
    as a whole word. A name holding a placeholder's character (`Case #1`) is left: the rules could
    make it appear where it was not. The boundary check counts a placeholder's characters as word
    characters, so no name is ever found inside a placeholder. (A scan, not a regex per name:
    compiling one for each of 20,000 failures took most of the time.)"""
    for name in sorted({n for n in names if n and not _PLACEHOLDER_CHAR_RE.search(n)}, key=len, reverse=True):
        if name in text:
            text = _replace_whole(text, name, name[0].isalnum() or name[-1].isalnum())
    return text


def _word_char_at(text: str, index: int) -> bool:
    return index >= 0 and _WORD_CHAR_RE.match(text, index) is not None


def _replace_whole(text: str, name: str, word: bool) -> str:
    parts: list[str] = []
    start = 0
    found = text.find(name)
    while found >= 0:
        end = found + len(name)
        if not word or (not _word_char_at(text, found - 1) and not _word_char_at(text, end)):
            parts += [text[start:found], TEST]
            start = end
            found = text.find(name, end)
        else:
            found = text.find(name, found + 1)
    return "".join(parts) + text[start:]


def normalise(text: str, names: Sequence[str] = (), values: bool = True) -> str:
    """`text` with what varies between tests replaced by placeholders and blanks collapsed; with
    `values=False` only ids, times, temp paths and the names are, numbers and quoted values kept.
    Idempotent: normalise(normalise(t, n, v), n, v) == normalise(t, n, v)."""
    rules = _MESSAGE_RE if values else _IDS_RE
    text = _BLANKS_RE.sub(" ", text).strip()  # first: no rule matches across a line break or blank
    names = [_BLANKS_RE.sub(" ", name).strip() for name in names]
    return rules.sub(_in_message, _without_names(text, names))


def without_test_prefix(message: str | None) -> str | None:
    """The message without MSTest's `Test method X threw exception:` (the test's name, again) and
    without trailing blanks; None stays None."""
    return None if message is None else _MSTEST_PREFIX_RE.sub("", message, count=1).rstrip()


def headline(message: str | None) -> str:
    """The lines of a failure message that say what failed: the first non-empty one (after
    MSTest's `Test method X threw exception:`) and those naming inner exceptions (`--->`), cut to
    HEADLINE_CHARS so that a hostile megabyte-long line costs no more than a normal one."""
    lines = [line for line in (without_test_prefix(message) or "").splitlines() if line.strip()]
    if not lines:
        return ""
    return "\n".join([lines[0], *(line for line in lines[1:] if _INNER_EXCEPTION in line)])[:HEADLINE_CHARS]


def echoed_names(failure: ReportFailure) -> tuple[str, ...]:
    """How a test may echo its own name: qualified, without its data row, and bare."""
    whole = failure.name.strip()
    plain = re.split(r"[(\[]", whole, maxsplit=1)[0].strip()
    bare = re.split(r"\.|::|/", plain)[-1]
    return tuple(n for n in (whole, plain, bare if len(bare) >= MIN_BARE_NAME else "") if n)


@dataclass(frozen=True, slots=True)
class ClusterKey:
    outcome: str
    message: str  # the normalised headline, "" without a message
    frame: str | None  # the normalised top project frame, else the failure's location
    alone: str | None = None  # the test's name, when there is nothing to group it by

    def digest(self) -> str:
        data = json.dumps([self.outcome, self.message, self.frame, self.alone], ensure_ascii=False)
        return hashlib.sha256(data.encode("utf-8", errors="replace")).hexdigest()[:12]


@dataclass(frozen=True, slots=True)
class FailureCluster:
    """Failures with one cause: `indices` into the report's failures, `failures` the same ones."""

    id: str
    key: ClusterKey
    indices: tuple[int, ...]
    failures: tuple[ReportFailure, ...]

    @property
    def size(self) -> int:
        return len(self.indices)

    @property
    def example(self) -> ReportFailure:
        return self.failures[0]

    @property
    def shared_frames(self) -> tuple[str, ...]:
        """The frames every member's stack starts with (at least the example's top frame): below
        them each test has its own callers, which say nothing about the cause."""
        frames = self.example.frames
        shared = len(frames)
        for failure in self.failures[1:]:
            same = 0
            for mine, theirs in zip(frames[:shared], failure.frames, strict=False):
                if mine != theirs:
                    break
                same += 1
            shared = same
        return frames[:max(shared, 1)]


def top_frame(failure: ReportFailure) -> str | None:
    """The first project frame with its ids normalised (line numbers kept: they are the place),
    else where the tool located the failure, else None."""
    if failure.frames:
        return _FRAME_RE.sub(_in_frame, failure.frames[0].strip())
    if failure.file:
        return f"{failure.file}:{failure.line}" if failure.line else failure.file
    return None


def cluster_key(failure: ReportFailure) -> ClusterKey:
    """Outcome, message shape and top frame. A failure without a frame or location keeps the
    numbers and quoted values of its message: nothing else says two such failures are one."""
    frame = top_frame(failure)
    message = normalise(headline(failure.message), echoed_names(failure), values=frame is not None)
    alone = failure.name if not message and frame is None else None
    return ClusterKey(failure.outcome.value, message, frame, alone)


def cluster_failures(failures: Sequence[ReportFailure]) -> tuple[FailureCluster, ...]:
    """Every failure in exactly one cluster; largest first, ties in order of first appearance."""
    members: dict[ClusterKey, list[int]] = {}
    for index, failure in enumerate(failures):
        members.setdefault(cluster_key(failure), []).append(index)
    ordered = sorted(members.items(), key=lambda item: (-len(item[1]), item[1][0]))
    return tuple(FailureCluster(k.digest(), k, tuple(ix), tuple(failures[i] for i in ix))
                 for k, ix in ordered)


def cluster_sizes(clusters: Iterable[FailureCluster]) -> list[int]:
    return [c.size for c in clusters]
