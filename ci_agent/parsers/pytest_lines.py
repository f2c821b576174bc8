"""The grammar of single pytest console lines: block titles, summary and verbose result lines,
the final counts line, and the subtest forms of each.

Pure functions over one clean line; every search is linear in the line's length and tries a
bounded number of split points, so a hostile line cannot make them slow.

Subtests (unittest's `subTest()`, the `subtests` fixture) print three dialects:

| printer | short summary | `-v` result line |
|---|---|---|
| pytest >= 9 (built in) | `SUBFAILED[msg] (i=3) node - message` | `node SUBFAILED[msg] (i=3)  [ 33%]` |
| pytest-subtests >= 0.11 | `[msg] (i=3) SUBFAIL node - message` | `node [msg] (i=3) SUBFAIL  [ 33%]` |
| pytest-subtests < 0.11 | `SUBFAIL node - message` (no description) | `node SUBFAIL  [ 33%]` |

A failed subtest is named `node description` (`tests/a.py::test_x [case 3] (i=3)`), as the
`-v` lines print it; its `____` block title is the test's title followed by the description.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ci_agent.report import Outcome, TestCounts

MAX_SPLIT_TRIES = 20
# `1 failed, 3 passed, 1 skipped, 2 warnings in 0.12s` (also `no tests ran in 0.01s`);
# pytest-subtests and pytest >= 9 add `80 subtests passed` (or skipped, xfailed, xpassed).
_COUNTS_RE = re.compile(
    r"(?P<items>(?:\d+ (?:subtests )?[a-z]+(?:, )?)+|no tests ran) in [\d.]+s(?: \([\d:]+\))?"
)
_COUNT_ITEM_RE = re.compile(r"(\d+) (?:subtests )?([a-z]+)")
_PROGRESS_RE = re.compile(r"\[ *\d{1,3}%\]")  # `[ 33%]` at the end of a `-v` line
_SUBFAILED = "SUBFAILED"  # pytest >= 9
_SUBFAIL = "SUBFAIL"  # pytest-subtests


def block_name(title: str) -> tuple[str, Outcome]:
    """`TestA.test_b` -> name part of the node id; `ERROR at setup of x` -> (x, error)."""
    for prefix in ("ERROR at setup of ", "ERROR at teardown of ", "ERROR collecting "):
        if title.startswith(prefix):
            return title.removeprefix(prefix), Outcome.ERROR
    return title, Outcome.FAILED


def split_subtest(name: str) -> tuple[str, str | None]:
    """`a.py::t[x y] [case 3] (i=3)` -> (`a.py::t[x y]`, `[case 3] (i=3)`); no description: None.

    A node id or block title has no space outside its `[parameter ids]`, so the first space
    outside brackets starts a subtest's description.
    """
    depth = 0
    for i, char in enumerate(name):
        if char == "[":
            depth += 1
        elif char == "]":
            depth = max(0, depth - 1)
        elif char == " " and depth == 0:
            return name[:i], (name[i + 1 :] or None)
    return name, None


def with_subtest(name: str, description: str | None) -> str:
    return f"{name} {description}" if description else name


def title_of_node(node: str) -> str:
    """The block title pytest prints for a node id: `a.py::TestA::test_b[x::y]` -> `TestA.test_b[x::y]`.

    A subtest keeps its description: `a.py::test_b (i=1)` -> `test_b (i=1)`.
    """
    node, description = split_subtest(node)
    _, sep, rest = node.partition("::")
    if not sep:
        return with_subtest(node, description)  # a module (collection error)
    head, bracket, params = rest.partition("[")
    return with_subtest(head.replace("::", ".") + bracket + params, description)


def node_of_title(module: str, title: str) -> str:
    """The inverse of title_of_node, given the module the block's first frame is in."""
    title, description = split_subtest(title)
    head, bracket, params = title.partition("[")
    return with_subtest(f"{module}::{head.replace('.', '::')}{bracket}{params}", description)


def is_node_id(text: str) -> bool:
    """`tests/a.py::TestA::test_b[...]` or a module `tests/a.py` (collection error)."""
    if not text or text[0].isspace():
        return False
    path, sep, _ = text.partition("::")
    return bool(sep and path and " " not in path) or (text.endswith(".py") and " " not in text)


def split_summary(text: str) -> tuple[str, str | None]:
    """`node - message` -> (node, message); a ` - ` inside `[param ids]` belongs to the node."""
    start = 0
    for _ in range(MAX_SPLIT_TRIES):
        at = text.find(" - ", start)
        if at < 0:
            break
        node = text[:at]
        if node.count("[") <= node.count("]"):
            return node, text[at + 3 :]
        start = at + 3
    node, sep, message = text.partition(" - ")
    return node, (message if sep else None)


def summary_line(line: str) -> tuple[Outcome, str, str | None] | None:
    """`FAILED node - message` / `ERROR node` of the short test summary."""
    for word, outcome in (("FAILED ", Outcome.FAILED), ("ERROR ", Outcome.ERROR)):
        if line.startswith(word):
            node, message = split_summary(line[len(word):])
            if is_node_id(node):
                return outcome, node, message
    return None


def _test_node(text: str) -> tuple[str, str | None] | None:
    """`node - message` when `node` is a test's node id (a subtest always has `::`)."""
    node, message = split_summary(text)
    return (node, message) if "::" in node and is_node_id(node) else None


@dataclass(frozen=True, slots=True)
class SubtestFailure:
    """One failed subtest of the short summary. `description` is None in the oldest dialect."""

    node: str
    description: str | None
    message: str | None


def subtest_summary_line(line: str) -> SubtestFailure | None:
    """A failed subtest's short-summary line in any of the three dialects (module docstring)."""
    if line.startswith(_SUBFAILED):  # `SUBFAILED[msg] (i=3) node - message`
        rest = line[len(_SUBFAILED):]
        at = 0
        for _ in range(MAX_SPLIT_TRIES):  # the description has spaces; the node starts after one
            at = rest.find(" ", at)
            if at < 0:
                return None
            found = _test_node(rest[at + 1 :])
            if found is not None:
                return SubtestFailure(found[0], rest[:at].strip() or None, found[1])
            at += 1
        return None
    if line.startswith(_SUBFAIL + " "):  # `SUBFAIL node - message` (pytest-subtests < 0.11)
        found = _test_node(line[len(_SUBFAIL) + 1 :])
        return SubtestFailure(found[0], None, found[1]) if found else None
    at = 0
    for _ in range(MAX_SPLIT_TRIES):  # `[msg] (i=3) SUBFAIL node - message`
        at = line.find(f" {_SUBFAIL} ", at)
        if at < 0:
            return None
        found = _test_node(line[at + len(_SUBFAIL) + 2 :])
        if found is not None:
            return SubtestFailure(found[0], line[:at].strip() or None, found[1])
        at += 1
    return None


def verbose_line(line: str) -> tuple[Outcome, str] | None:
    """`node FAILED   [ 7%]` of `pytest -v`, or xdist's `[gw0] [ 7%] FAILED node`."""
    words = line.split()
    for i, word in enumerate(words):
        if word in ("FAILED", "ERROR"):
            outcome = Outcome.FAILED if word == "FAILED" else Outcome.ERROR
            if i == 1 and "::" in words[0] and is_node_id(words[0]):
                return outcome, words[0]
            if i > 0 and words[0].startswith("[gw") and i + 1 < len(words) and "::" in words[i + 1]:
                return outcome, words[i + 1]
            return None
    return None


def _without_progress(text: str) -> str:
    """`node ... SUBFAIL   [ 33%]` -> `node ... SUBFAIL` (found from the end: a long run of
    spaces before some other text costs one pass, not one per space)."""
    at = text.rfind("[")
    if at > 0 and text[at - 1].isspace() and _PROGRESS_RE.fullmatch(text, at):
        return text[:at].rstrip()
    return text


def subtest_verbose_line(line: str) -> str | None:
    """The failed subtest a `-v` result line names, as `node description`.

    Only lines that carry a description: the oldest dialect's bare `node SUBFAIL` cannot tell
    one subtest from another, and its blocks and summary lines name them anyway.
    """
    text = _without_progress(line.rstrip())
    if text.endswith(" " + _SUBFAIL):  # `node [msg] (i=3) SUBFAIL`
        node, description = split_subtest(text[: -len(_SUBFAIL) - 1])
    else:  # `node SUBFAILED[msg] (i=3)`
        node, sep, description_text = text.partition(" " + _SUBFAILED)
        if not sep:
            return None
        description = description_text.strip() or None
    if description is None or "::" not in node or not is_node_id(node):
        return None
    return with_subtest(node, description)


def counts_from(items: str) -> TestCounts:
    """pytest's words -> our counts: xfailed is skipped, xpassed passed, errors failed.

    Subtests are test cases of their own in the totals (`4 failed, 4 passed, 10 subtests passed`
    is 18 tests, 4 failed), as pytest's own JUnit XML counts them (`tests="18" failures="4"`);
    pytest already prints failed subtests under `failed`.
    """
    found: dict[str, int] = {}
    for number, word in _COUNT_ITEM_RE.findall(items):
        found[word] = found.get(word, 0) + int(number)
    failed = found.get("failed", 0) + found.get("error", 0) + found.get("errors", 0)
    passed = found.get("passed", 0) + found.get("xpassed", 0)
    skipped = found.get("skipped", 0) + found.get("xfailed", 0)
    return TestCounts(total=failed + passed + skipped, passed=passed, failed=failed, skipped=skipped)


def counts_line(text: str) -> TestCounts | None:
    if " in " not in text or not text.endswith(("s", ")")):
        return None
    m = _COUNTS_RE.fullmatch(text)
    return counts_from(m["items"]) if m else None
