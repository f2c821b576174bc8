"""Gates against weakened checks: assertions that cannot fail, failures caught and dropped,
tests that return before they check anything, and checks deleted without a replacement.

Production code asserts and catches too (guards, Debug.Assert, retries), so catching and early
returns are judged in test code only; a tautology or a caught assertion *error* is one anywhere.
"""

from __future__ import annotations

import re

from ci_agent.patch import lines
from ci_agent.patch.diff import FilePatch, Rejection
from ci_agent.patch.lines import Line

_HOW = "Keep the original check and fix the code under test."
_ARG = r"([\w.]+(?:\(\s*\))?|\"[^\"]*\"|'[^']*'|-?\d+(?:\.\d+)?)"
_TAUTOLOGY = re.compile(
    r"\bAssert\s*\.\s*(True|IsTrue)\s*\(\s*(true|!\s*false|1\s*==\s*1)\s*[,)]|"
    r"\bAssert\s*\.\s*(False|IsFalse)\s*\(\s*(false|!\s*true)\s*[,)]|"
    r"\bAssert\s*\.\s*Pass\s*\(|\bAssert\s*\.\s*That\s*\(\s*true\s*[,)]|"
    r"^\s*assert\s+(True|1|not\s+False|not\s+None|\"[^\"]+\"|'[^']+')\s*(,.*)?(#.*)?$|"
    r"\bself\s*\.\s*assert(True|Equal|Equals)?\s*\(\s*(True|1)\s*\)|"
    r"\bself\s*\.\s*assertFalse\s*\(\s*(False|0|None)\s*\)|"
    r"\bexpect\s*\(\s*true\s*\)\s*\.\s*toBe\s*\(\s*true\s*\)|"
    r"\b(Assert\s*\.\s*(Equal|AreEqual|Same|AreSame|StrictEqual)|self\s*\.\s*assert(Equal|Equals|Is|"
    rf"CountEqual)|assert_equal)\s*\(\s*(?P<e1>{_ARG})\s*,\s*(?P=e1)\s*[,)]|"
    rf"^\s*assert\s+(?P<e2>{_ARG})\s*(==|is|>=|<=)\s*(?P=e2)\s*(,.*)?(#.*)?$"
)
# `or True` / `|| true` in a check, or in a test's condition (`$(cmd || true)` in a script is
# ordinary shell, so elsewhere it is the build-script gate's business)
_ALWAYS_TRUE = re.compile(r"\bor\s+(True|1|not\s+False)\b|\|\|\s*true\b")
_CONDITION = re.compile(r"^\s*(if|elif|while)\b|\bif\s*\(")
_CAUGHT_ASSERTION = re.compile(
    r"\bexcept\s*\(?[^:]*\bAssertionError\b|\bpytest\s*\.\s*raises\s*\(\s*AssertionError\b|"
    r"\bsuppress\s*\([^)]*\bAssertionError\b|\bassertRaises\s*\(\s*AssertionError\b|"
    r"\bcatch\s*\(\s*([\w.]+\.)?(XunitException|AssertionException|AssertFailedException|"
    r"AssertInconclusiveException|MultipleAssertException|InconclusiveException|"
    r"AssertActualExpectedException|\w+AssertException|EqualException|TrueException|"
    r"FalseException|NotNullException|NullException|ThrowsException|AssertionFailedError|"
    r"AssertionError)\b|"
    r"\bAssert\s*\.\s*(Multiple|Catch)\s*\(.*=>\s*\{?\s*\}?\s*\)\s*;?\s*$"
)
_CATCH_ALL_IN_TEST = re.compile(
    r"^\s*except\s*:|^\s*except\s*\(?\s*(BaseException|Exception)\s*\)?\s*(as\s+\w+\s*)?:|"
    r"\bcatch\s*(\{|$)|\bcatch\s*\(\s*(System\s*\.\s*)?Exception\b[^)]*\)"
)
ASSERTION = re.compile(
    r"\b(Assert|CollectionAssert|StringAssert|FileAssert|DirectoryAssert|ClassicAssert)\s*\.|"
    r"\.Should(Not)?\s*\(|\.Verify\s*\(|^\s*assert\b|\bself\.assert\w*\s*\(|\bexpect\s*\(|"
    r"\bt\.(Error|Fatal|Fail)f?\s*\(|\b(require|assert)\.\w+\s*\(|\bpytest\s*\.\s*(raises|fail)\b"
)
_PY_TEST_DEF = re.compile(r"^\s*(async\s+)?def\s+test\w*\s*\(.*\)\s*(->\s*[\w\[\], .]+)?:\s*(#.*)?$")
_CS_TEST_SIGNATURE = re.compile(r"^\s*(public|internal|private|protected)?\s*(static\s+)?(async\s+)?"
                                r"(void|Task|ValueTask)\s+\w+\s*\([^)]*\)\s*(\{\s*)?$")
_EARLY_RETURN = re.compile(r"^\s*(if\s*\(?\s*(True|true|1)\s*\)?\s*:?\s*)?return\b\s*(None)?\s*;?\s*"
                           r"(#.*|//.*)?$")
_DOCSTRING = re.compile(r"^\s*[rRbBuU]?(\"\"\"|''')")
_TEST_ATTRIBUTE = re.compile(r"^\s*\[\s*(Fact|Theory|Test|TestMethod|TestCase|DataTestMethod)\b")


def _message(fp: FilePatch, line: Line, what: str, how: str = _HOW) -> str:
    return lines.message(fp, line, what, how)


def _early_return(fp: FilePatch, test_file: bool) -> Line | None:
    """An added `return` as the first statement of a test (after its docstring or `{`)."""
    before: list[str] = []  # the significant new-side lines so far in this hunk
    for is_added, line in lines.new_side(fp):
        text = line.text.strip()
        if line.number == 0:
            before = []
            continue
        if not text or text.startswith(("#", "//")):
            continue
        if is_added and _EARLY_RETURN.match(text):
            body = [b for b in before if not _DOCSTRING.match(b) and not b.endswith(('"""', "'''"))]
            head = body[-1] if body else ""
            if _PY_TEST_DEF.match(head):
                return line
            if head == "{" and len(body) >= 2 and _CS_TEST_SIGNATURE.match(body[-2]) and (
                    test_file or any(_TEST_ATTRIBUTE.match(b) for b in body[-4:-2])):
                return line
            if _CS_TEST_SIGNATURE.match(head) and head.endswith("{") and test_file:
                return line
        before.append(text)
    return None


def rejections(fp: FilePatch, test_file: bool) -> list[Rejection]:
    """Weakened checks in `fp`; `test_file`: the path or its lines look like tests."""
    p = fp.path
    added = lines.added(fp)
    rule = "gate.assertion_weakened"
    if (hit := lines.first(added, _TAUTOLOGY)) is not None:
        return [Rejection(rule, p, _message(fp, hit, "the patch adds an assertion that cannot fail"))]
    hit = next((a for a in added if _ALWAYS_TRUE.search(a.text) and (
        ASSERTION.search(a.text) or (test_file and _CONDITION.search(a.text)))), None)
    if hit is not None:
        return [Rejection(rule, p, _message(fp, hit, "the patch makes a check always true"))]
    if (hit := lines.first(added, _CAUGHT_ASSERTION)) is not None:
        return [Rejection(rule, p, _message(fp, hit, "the patch catches the assertion failure itself",
                                            "Let a failing assertion fail the test; " + _HOW))]
    if not test_file:
        return []
    if (hit := lines.first(added, _CATCH_ALL_IN_TEST)) is not None:
        return [Rejection(rule, p, _message(fp, hit, "the patch catches every exception in test code, "
                                            "including the assertion's own failure",
                                            "Catch only the exception the test expects (or use the "
                                            "framework's Throws/raises); " + _HOW))]
    if (hit := _early_return(fp, test_file)) is not None:
        return [Rejection(rule, p, _message(fp, hit, "the patch returns at the top of a test, so "
                                            "nothing after it is checked", _HOW))]
    gone = [r for r in lines.removed(fp) if ASSERTION.search(r.text)]
    if len(gone) > sum(1 for a in added if ASSERTION.search(a.text)):
        return [Rejection(rule, p, _message(fp, gone[0], "the patch removes assertions without "
                                            "replacing them", "Keep every check (change an expected "
                                            "value only when the test itself is wrong, and say why in "
                                            "the summary) and fix the code under test."))]
    return []
