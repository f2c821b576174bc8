"""Gates against fake fixes: changes that turn a pipeline green without fixing anything.

Each gate reads the added and removed lines of a parsed patch and is rejected unless the
repository's configuration opts in (`patch.gates.allow_*`). They are deliberately simple text
rules: a false alarm costs the model one more turn with a clear message; a fake fix that lands
costs the team trust in every later fix.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from ci_agent.config import GateSettings
from ci_agent.patch import assertions, diagnostics, lines, skips
from ci_agent.patch.diff import FilePatch, Patch, Rejection

_TEST_DIR = re.compile(r"(^|/)(tests?|__tests__|spec|specs|testing)/", re.I)
_TEST_PROJECT_DIR = re.compile(r"(^|/)[^/]*[.-](tests?|specs?|unittests?|integrationtests?)/", re.I)
_TEST_FILE = re.compile(
    r"((^|/)test_[^/]*\.py|_test\.(py|go)|(Tests?|Specs?)\.(cs|fs|vb|java|kt)|"
    r"\.(test|spec)\.[jt]sx?|(^|/)conftest\.py)$",
    re.I,
)
_TEST_CASE = re.compile(
    r"\[\s*(Fact|Theory|Test|TestMethod|TestCase|DataTestMethod)\b|"
    r"^\s*(async\s+)?def\s+test_?\w*\s*\(|^\s*func\s+Test\w*\(|"
    r"^\s*@Test\b|\b(it|test)\s*\(\s*['\"`]"
)
_LINE_COMMENT = re.compile(r"(//|#(?!\s*(pragma|nullable))).*$")
_BLOCK_COMMENT = re.compile(r"/\*.*?\*/", re.S)
_EMPTY_CATCH = re.compile(
    r"\bcatch\s*(\(\s*(System\.)?(Exception|Throwable|object)\b[^)]*\))?\s*(when\s*\([^)]*\)\s*)?"
    r"\{\s*\}|"
    r"\bexcept\s*(\(?\s*(Exception|BaseException)\b[^:]*)?:\s*(pass|\.\.\.)\s*$",
    re.M,
)


def is_test_path(path: str) -> bool:
    return bool(_TEST_DIR.search(path) or _TEST_PROJECT_DIR.search(path) or _TEST_FILE.search(path))


def _added(fp: FilePatch) -> list[str]:
    return [line[1:] for h in fp.hunks for line in h.lines if line[:1] == "+"]


def _removed(fp: FilePatch) -> list[str]:
    return [line[1:] for h in fp.hunks for line in h.lines if line[:1] == "-"]


def _count(pattern: re.Pattern[str], lines: list[str]) -> int:
    return sum(1 for line in lines if pattern.search(line))


def _code(lines: list[str]) -> list[str]:
    """Lines without their comments: a test attribute in a comment is no test."""
    return [_LINE_COMMENT.sub("", _BLOCK_COMMENT.sub(" ", line)) for line in lines]


def _uncomment(line: str) -> str:
    return re.sub(r"^(\s*)(#|//|/\*)\s*", r"\1", line)


def _strip_comments(text: str) -> str:
    text = _BLOCK_COMMENT.sub(" ", text)
    return "\n".join(_LINE_COMMENT.sub("", line) for line in text.split("\n"))


def _test_gates(fp: FilePatch, s: GateSettings) -> list[Rejection]:
    p = fp.path
    out: list[Rejection] = []
    removed_cases = _count(_TEST_CASE, _code(_removed(fp)))
    # a test commented out is still there to see: that is the skip gate's business
    added_cases = _count(_TEST_CASE, [_uncomment(line) if skips.COMMENTED_TEST.search(line) else code
                                      for line, code in zip(_added(fp), _code(_added(fp)), strict=True)])
    if not s.allow_test_deletion and is_test_path(fp.old_path or ""):
        if fp.is_deleted:
            out.append(Rejection("gate.test_deleted", p, f"The patch deletes the test file `{p}`. "
                                 "Deleting tests hides the failure instead of fixing it; fix the "
                                 "code under test (or the test's wrong expectation) instead."))
        elif removed_cases > added_cases:
            first = next((r.number for r in lines.removed(fp) if _TEST_CASE.search(r.text)), 0)
            out.append(Rejection("gate.test_deleted", p, f"`{p}` line {first}: the patch removes test "
                                 f"cases from `{p}`. "
                                 "Removing a failing test hides the failure; keep the test and fix "
                                 "the code it tests."))
        elif fp.removed and not fp.added and fp.removed >= 3 and not any(
            line.strip() for line in _added(fp)
        ) and _count(assertions.ASSERTION, _removed(fp)):
            out.append(Rejection("gate.test_deleted", p, f"The patch empties test code in `{p}`. "
                                 "Keep the test's checks and fix the code under test instead."))
    # production code asserts too (Debug.Assert, guard asserts); only tests' checks are gated
    looks_like_test = is_test_path(p) or bool(_count(_TEST_CASE, _added(fp) + _removed(fp)))
    if not s.allow_test_skips:
        out += skips.skip_rejections(fp, looks_like_test)
        out += skips.filter_rejections(fp)
    # assertions that go with a removed test case are that gate's business, not this one's
    # (and the checks inside a test commented out are the skip gate's)
    already_gated = removed_cases > added_cases or any(skips.COMMENTED_TEST.search(a) for a in _added(fp))
    if not s.allow_assertion_changes and not fp.is_deleted and not already_gated:
        out += assertions.rejections(fp, looks_like_test)
    return out


def _code_gates(fp: FilePatch, s: GateSettings) -> list[Rejection]:
    p = fp.path
    out: list[Rejection] = []
    if not s.allow_warning_suppression:
        out += diagnostics.suppression_rejections(fp)
    if not s.allow_strictness_changes:
        out += diagnostics.strictness_rejections(fp)
    if not s.allow_empty_catch:
        for block in lines.blocks(fp):
            match = _EMPTY_CATCH.search(_strip_comments(block.text))
            if match:
                snippet = " ".join(match[0].split())
                out.append(Rejection("gate.empty_catch", p, f"`{p}` line {block.number}: the patch adds "
                                     f"an exception handler that swallows everything (`{snippet[:80]}`). "
                                     "Handle the specific exception, or fix what throws it."))
                break
    return out


_GATES: tuple[Callable[[FilePatch, GateSettings], list[Rejection]], ...] = (_test_gates, _code_gates)


def run_gates(patch: Patch, settings: GateSettings) -> list[Rejection]:
    return [r for fp in patch.files if not fp.binary for gate in _GATES for r in gate(fp, settings)]
