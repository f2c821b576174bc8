"""Hypothesis strategies that turn real seeds into hostile inputs.

Three families, mixed per target:
- `mutated(seeds)`: byte-level edits of a real file (flip, cut, insert, delete, splice two seeds,
  repeat a slice many times, drop in a hostile token), the way a truncated download, a log from a
  broken encoder or an attacker's crafted file differs from a good one;
- `json_mutated(seeds)`: the JSON tree of a seed with nodes replaced by other JSON values (wrong
  types, huge integers, Infinity/NaN, deep nesting, long strings, missing keys);
- `st.binary()`: no structure at all.
Repeats are capped so one input stays under MAX_INPUT bytes: large enough to show growth, small
enough that a campaign of thousands fits in minutes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from typing import Any

from hypothesis import strategies as st

MAX_INPUT = 2 * 1024 * 1024

TOKENS: tuple[bytes, ...] = (
    b"\x00", b"\r", b"\r\n", b"\n\n", b"\xff\xfe", b"\xfe\xff", b"\xef\xbb\xbf", b"\xed\xa0\x80", b"\xc3",
    b"\x1b[31m", b"\x1b]8;;http://x\x1b\\", b"\x1b[2K\r", b"\x9b", "\u202e".encode(),
    b"<!DOCTYPE r [<!ENTITY a \"aaaaaaaaaa\"><!ENTITY b \"&a;&a;&a;&a;&a;&a;&a;&a;\">]>", b"&b;", b"&#0;",
    b"<![CDATA[", b"]]>", b"<!--", b"-->", b"<?xml version=\"1.0\" encoding=\"utf-16\"?>", b"xmlns:x=\"u\" ",
    b"</", b"/>", b"=\"", b"'", b"<x:y>", b"\n@@ -1,3 +1,4 @@\n", b"\n@@ -0,0 +99999999999999999999 @@\n",
    b"--- a/", b"+++ b/", b"diff --git a/x b/x\n", b"rename from ", b"new file mode 120000\n",
    b"Binary files a/x and b/x differ\n", b"GIT binary patch\n", b"\\ No newline at end of file\n",
    b"../../", b".git/hooks/pre-commit", b".github/workflows/x.yml", b"/ci-agent ", b"/ci-agent fix\n",
    b"```", b"~~~~", b"    ", b"> ", b"error CS0103: ", b"warning MSB3026: ", b"): error ", b"##[group]",
    b"##[error]", b"section_start:1:x\r\x1b[0K", b"#5 0.123 ", b"2026-01-01T00:00:00.0000000Z ", b"9" * 5000,
    b"-1", b"1e999", b"NaN", b"[" * 3000, b"{\"a\":" * 1500, b"\"\\ud800\"", b"Failed ", b"  X ", b"=" * 80,
    b"Total tests: ", b"FAILED ", b"Passed!  - Failed:     0", b"Content-Length: ",
    b"Transfer-Encoding: chunked",
)


def _insert(data: bytes, pos: int, piece: bytes) -> bytes:
    return data[:pos] + piece + data[pos:]


@st.composite
def _edit(draw: st.DrawFn, data: bytes, seeds: Sequence[bytes]) -> bytes:
    size = len(data)
    pos = draw(st.integers(0, size))
    kind = draw(st.sampled_from(("flip", "cut", "insert", "delete", "splice", "repeat", "token", "token")))
    if kind == "flip" and size:
        at = min(pos, size - 1)
        return data[:at] + bytes([draw(st.integers(0, 255))]) + data[at + 1:]
    if kind == "cut":
        return data[:pos]
    if kind == "insert":
        return _insert(data, pos, draw(st.binary(max_size=64)))
    if kind == "delete":
        return data[:pos] + data[pos + draw(st.integers(1, 4096)):]
    if kind == "splice" and seeds:
        other = draw(st.sampled_from(seeds))
        start = draw(st.integers(0, len(other)))
        return data[:pos] + other[start:]
    if kind == "repeat" and size:
        start = min(pos, size - 1)
        piece = data[start:start + draw(st.integers(1, 512))]
        times = draw(st.sampled_from((2, 10, 100, 1000, 10_000)))
        times = max(1, min(times, (MAX_INPUT - size) // max(1, len(piece))))
        return _insert(data, start, piece * times)
    return _insert(data, pos, draw(st.sampled_from(TOKENS)))


@st.composite
def mutated(draw: st.DrawFn, seeds: Sequence[bytes], max_edits: int = 4) -> bytes:
    data = draw(st.sampled_from(seeds))
    for _ in range(draw(st.integers(0, max_edits))):
        data = draw(_edit(data, seeds))
    return data[:MAX_INPUT]


def _json_leaf() -> st.SearchStrategy[Any]:
    return st.one_of(
        st.sampled_from([1, 1.5, True, False, "x", {}, [], 2**70, -3]),  # a value of the wrong type
        st.none(), st.booleans(), st.integers(), st.sampled_from([0, -1, 2**63, 10**400, -(10**400)]),
        st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=40),
        st.sampled_from(["", "ci-agent/fix/x", "a" * 70_000, "<!-- -->", "../..", "\u0000", "²", "𝟙𝟚"]),
    )


def json_values() -> st.SearchStrategy[Any]:
    return st.recursive(_json_leaf(), lambda kids: st.one_of(
        st.lists(kids, max_size=4), st.dictionaries(st.text(max_size=12), kids, max_size=4)), max_leaves=12)


def _paths(tree: Any, max_depth: int = 24) -> list[tuple[Any, ...]]:
    """Every node's path, not below `max_depth` (a deep nest is one node: its top)."""
    found: list[tuple[Any, ...]] = []
    todo: list[tuple[tuple[Any, ...], Any]] = [((), tree)]
    while todo:
        prefix, node = todo.pop()
        found.append(prefix)
        if len(prefix) >= max_depth:
            continue
        if isinstance(node, dict):
            todo += [((*prefix, key), value) for key, value in node.items()]
        elif isinstance(node, list):
            todo += [((*prefix, index), value) for index, value in enumerate(node)]
    return found


def _replace(node: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    head, rest = path[0], path[1:]
    copy: Any = dict(node) if isinstance(node, dict) else list(node)
    copy[head] = _replace(copy[head], rest, value)
    return copy


def _deep(depth: int) -> str:
    """A placeholder `dumps` writes as `depth` nested arrays: nesting past the recursion limit
    cannot be built as Python objects and written with json.dumps (which recurses too)."""
    return f"\x00deep:{depth}\x00"


_DEEP_RE = re.compile(r'"\\u0000deep:(\d+)\\u0000"')


@st.composite
def json_tree_mutated(draw: st.DrawFn, seeds: Sequence[Any], max_edits: int = 3) -> Any:
    tree = draw(st.sampled_from(seeds))
    for _ in range(draw(st.integers(0, max_edits))):
        path = draw(st.sampled_from(_paths(tree)))
        kind = draw(st.sampled_from(("value", "value", "delete", "deep")))
        if kind == "delete" and path:
            parent = _get(tree, path[:-1])
            if isinstance(parent, dict):
                tree = _replace(tree, path[:-1], {k: v for k, v in parent.items() if k != path[-1]})
            continue
        new = _deep(draw(st.sampled_from((50, 900, 5000)))) if kind == "deep" else draw(json_values())
        tree = _replace(tree, path, new)
    return tree


def _get(node: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        node = node[key]
    return node


def dumps(value: Any) -> bytes:
    """JSON text as a hostile sender would write it (NaN/Infinity allowed, deep nesting kept)."""
    text = json.dumps(value)
    text = _DEEP_RE.sub(lambda m: "[" * int(m.group(1)) + "1" + "]" * int(m.group(1)), text)
    return text.encode("utf-8", "surrogatepass")


def json_mutated(seeds: Sequence[bytes], wrap: Callable[[bytes], bytes] = lambda b: b
                 ) -> st.SearchStrategy[bytes]:
    """JSON seeds mutated as trees (then written out), sometimes also edited as bytes."""
    trees = [json.loads(s) for s in seeds]
    as_text = json_tree_mutated(trees).map(dumps).map(wrap)
    return st.one_of(as_text, as_text, as_text, as_text.flatmap(lambda b: mutated([b], max_edits=2)))


def any_input(seeds: Sequence[bytes]) -> st.SearchStrategy[bytes]:
    """The default mix: mostly real seeds mutated, some bare random bytes."""
    return st.one_of(mutated(seeds), mutated(seeds), mutated(seeds), st.binary(max_size=4096))
