"""How each test framework names one test on its command line, and how a name is escaped there.

Test names come from logs: untrusted. Every function here either returns text that selects
exactly the named test (or, where the framework cannot say less, the named test's method or
top-level function, never more) or raises `Unsafe` with the reason; nothing a name holds can
become an option, a wildcard or a broader filter.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import PurePosixPath

from ci_agent.parsers.pytest_lines import split_subtest

MAX_NAME_CHARS = 1000
# One argument of the filter; Linux refuses a single argument over 128 KiB (MAX_ARG_STRLEN).
MAX_FILTER_CHARS = 100_000


class Unsafe(ValueError):
    """A test name that cannot be re-run safely (the message says why; it quotes no name)."""


def check_name(name: str) -> None:
    """Names any framework refuses to see: empty, absurdly long, control characters (NUL, newline,
    escape sequences), or starting with `-` (it would read as an option)."""
    if not name or not name.strip():
        raise Unsafe("a failed test has an empty name")
    if len(name) > MAX_NAME_CHARS:
        raise Unsafe(f"a failed test's name is longer than {MAX_NAME_CHARS} characters")
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in name):
        raise Unsafe("a failed test's name holds a control character (NUL, newline, escape)")
    if name.startswith("-"):
        raise Unsafe("a failed test's name starts with '-' and would read as an option")


# --- pytest ---------------------------------------------------------------------------------

def pytest_node(name: str) -> str:
    """The node id to re-run for a failed pytest test: `tests/a.py::TestA::test_b[x]` as it is; a
    subtest (`node [case] (i=3)`) re-runs its test. The file part must be a relative `.py` path
    inside the repository (no `..`, not absolute): a node id is also a path pytest collects."""
    check_name(name)
    node, _description = split_subtest(name)
    path, sep, rest = node.partition("::")
    if not sep or not rest:
        raise Unsafe("a failed pytest entry is not a test node id (a collection error or a block title)")
    pure = PurePosixPath(path.replace("\\", "/"))
    if pure.is_absolute() or ".." in pure.parts or re.match(r"[A-Za-z]:", path) or not path.endswith(".py"):
        raise Unsafe("a failed pytest test's file is not a relative .py path in the repository")
    return node


# --- dotnet test (VSTest filter) ------------------------------------------------------------

# VSTest's FilterHelper escapes these with a backslash inside a value.
_VSTEST_SPECIAL = frozenset("\\()&|=!~")
# `dotnet test` hands the filter to MSBuild (VSTestTestCaseFilter), which splits a property at
# `,` and `;` and unescapes `%XX`: the documented escape of a comma is `%2C`.
_MSBUILD_ESCAPES = {"%": "%25", ",": "%2C", ";": "%3B"}


def vstest_value(text: str) -> str:
    out = []
    for char in text:
        if char in _VSTEST_SPECIAL:
            out.append("\\" + char)
        else:
            out.append(_MSBUILD_ESCAPES.get(char, char))
    return "".join(out)


def dotnet_method(name: str) -> str:
    """`Ns.Class.Method(x: 1)` -> `Ns.Class.Method`: a data row's arguments are not part of the
    FullyQualifiedName, so its method is re-run (all rows of it)."""
    check_name(name)
    method = name.split("(", 1)[0].strip()
    if not method or " " in method or "." not in method:
        raise Unsafe("a failed .NET test's name is not a fully qualified Namespace.Class.Method")
    return method


def dotnet_filter(methods: Sequence[str]) -> str:
    return "|".join(f"FullyQualifiedName={vstest_value(m)}" for m in methods)


# --- go test ------------------------------------------------------------------------------

_GO_META = frozenset("\\.+*?()|[]{}^$")
_GO_TOP = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def go_quote(text: str) -> str:
    """regexp.QuoteMeta."""
    return "".join("\\" + c if c in _GO_META else c for c in text)


def go_levels(name: str, package: str | None) -> tuple[str, ...]:
    """`pkg.TestA/sub/case_1` -> (`TestA`, `sub`, `case_1`): go's -run matches one pattern per
    `/`-separated level. The top level is a Go identifier; a subtest level has no space (go
    rewrites spaces to `_`)."""
    check_name(name)
    if package and name.startswith(package + "."):
        name = name[len(package) + 1:]
    levels = tuple(name.split("/"))
    if not _GO_TOP.fullmatch(levels[0]) or any(not level or " " in level for level in levels[1:]):
        raise Unsafe("a failed go test's name is not TestName or TestName/subtest")
    return levels


def go_run_pattern(tests: Sequence[tuple[str, ...]]) -> str:
    """`^(?:TestA|TestB)$/^(?:x|y)$`: one alternation per level. go cannot say `A/x or B/y` in one
    -run, so with subtests of several tests each level lists the failed names of that level:
    the tests re-run are among the failed tests' own subtests, never others'. A test that failed
    as a whole (no subtest named) stops the pattern at the top level (all its subtests run)."""
    depth = min(len(levels) for levels in tests)
    parts = []
    for level in range(depth):
        names = dict.fromkeys(levels[level] for levels in tests)
        parts.append("^(?:" + "|".join(go_quote(n) for n in names) + ")$")
    return "/".join(parts)


# --- cargo test ---------------------------------------------------------------------------

_RUST_PATH = re.compile(r"[^\W\d][\w]*(?:::[^\W\d][\w]*)*")


def cargo_name(name: str) -> str:
    """A libtest name (`tests::it_works`) is a Rust path: identifiers joined by `::`."""
    check_name(name)
    if not _RUST_PATH.fullmatch(name):
        raise Unsafe("a failed cargo test's name is not a Rust path like module::test_name")
    return name


# --- jest, vitest, node --test: a JavaScript regular expression ---------------------------

_JS_META = frozenset("\\^$.*+?()[]{}|/-")


def js_quote(text: str) -> str:
    return "".join("\\" + c if c in _JS_META else c for c in text)


def js_name_pattern(names: Sequence[str]) -> str:
    """`^(?:a|b)$`, each name escaped: the whole name matches, nothing else does."""
    for name in names:
        check_name(name)
    return "^(?:" + "|".join(js_quote(n) for n in dict.fromkeys(names)) + ")$"


def check_filter(text: str) -> str:
    if len(text) > MAX_FILTER_CHARS:
        raise Unsafe(f"the filter naming the failed tests would be longer than {MAX_FILTER_CHARS} characters")
    return text
