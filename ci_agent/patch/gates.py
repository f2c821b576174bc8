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
from ci_agent.patch.parse import FilePatch, Patch, Rejection

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
_SKIP = re.compile(
    r"\[\s*(Fact|Theory)\s*\([^)\]]*\bSkip\s*=|"  # xUnit [Fact(Skip = "...")]
    r"[\[,]\s*(Ignore|Explicit)(Attribute)?\s*[\](,]|"  # NUnit/MSTest [Ignore], [Explicit]
    r"@pytest\.mark\.(skip|skipif|xfail)\b|\bpytest\.(skip|xfail)\s*\(|"
    r"@unittest\.(skip|skipIf|skipUnless|expectedFailure)\b|\bself\.skipTest\s*\(|"
    r"\bAssert\.(Ignore|Inconclusive)\s*\(|\bt\.Skip(Now|f)?\s*\(|"
    r"\b(it|test|describe)\.(skip|todo)\s*\(|\bx(it|describe|test)\s*\(|@Disabled\b|@Ignore\b"
)
_ASSERTION = re.compile(
    r"\b(Assert|CollectionAssert|StringAssert|FileAssert|DirectoryAssert|ClassicAssert)\s*\.|"
    r"\.Should(Not)?\s*\(|\.Verify\s*\(|^\s*assert\b|\bself\.assert\w*\s*\(|\bexpect\s*\(|"
    r"\bt\.(Error|Fatal|Fail)f?\s*\(|\b(require|assert)\.\w+\s*\("
)
_TRIVIAL_ASSERTION = re.compile(
    r"\bAssert\.(True|IsTrue)\s*\(\s*true\s*[,)]|\bAssert\.(False|IsFalse)\s*\(\s*false\s*[,)]|"
    r"\bAssert\.Pass\s*\(|\bAssert\.That\s*\(\s*true\s*[,)]|^\s*assert\s+(True|1)\s*(#.*)?$|"
    r"\bself\.assertTrue\s*\(\s*True\s*\)|\bexpect\s*\(\s*true\s*\)\s*\.\s*toBe\s*\(\s*true\s*\)|"
    r"\bAssert\.Equal\s*\(\s*(\w+)\s*,\s*\5\s*\)|\bAssert\.AreEqual\s*\(\s*(\w+)\s*,\s*\6\s*\)"
)
_SUPPRESSION = re.compile(
    r"#\s*pragma\s+warning\s+disable|<\s*NoWarn\s*>|\bNoWarn\s*=|\[\s*(assembly\s*:\s*)?"
    r"SuppressMessage|#\s*noqa\b|#\s*type:\s*ignore|eslint-disable|@ts-(ignore|nocheck)|"
    r"#!?\[\s*allow\s*\(|//\s*nolint\b|@SuppressWarnings\b|#\s*pylint:\s*disable|"
    r"dotnet_diagnostic\.\w+\.severity\s*=\s*(none|silent|suggestion)\b"  # .editorconfig
)
_STRICTNESS_OFF = re.compile(
    r"<\s*TreatWarningsAsErrors\s*>\s*false|<\s*Nullable\s*>\s*(disable|annotations)|"
    r"#\s*nullable\s+(disable|restore)|<\s*WarningLevel\s*>\s*0|<\s*EnableNETAnalyzers\s*>\s*false|"
    r"<\s*RunAnalyzers\w*\s*>\s*false|<\s*AnalysisLevel\s*>\s*none|<\s*AnalysisMode\s*>\s*None|"
    r"<\s*CodeAnalysisTreatWarningsAsErrors\s*>\s*false",
    re.I,
)
_STRICTNESS_ON = re.compile(
    r"<\s*TreatWarningsAsErrors\s*>\s*true|<\s*Nullable\s*>\s*enable|<\s*WarningsAsErrors\s*>|"
    r"#\s*nullable\s+enable",
    re.I,
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


def _added_blocks(fp: FilePatch) -> list[str]:
    """Runs of consecutive added lines, each joined, for patterns spanning lines (catch { })."""
    blocks: list[str] = []
    for hunk in fp.hunks:
        current: list[str] = []
        for line in [*hunk.lines, " "]:
            if line[:1] == "+":
                current.append(line[1:].rstrip("\r"))
            elif current:
                blocks.append("\n".join(current))
                current = []
    return blocks


def _strip_comments(text: str) -> str:
    text = _BLOCK_COMMENT.sub(" ", text)
    return "\n".join(_LINE_COMMENT.sub("", line) for line in text.split("\n"))


def _test_gates(fp: FilePatch, s: GateSettings) -> list[Rejection]:
    p = fp.path
    out: list[Rejection] = []
    if not s.allow_test_deletion and is_test_path(fp.old_path or ""):
        if fp.is_deleted:
            out.append(Rejection("gate.test_deleted", p, f"The patch deletes the test file `{p}`. "
                                 "Deleting tests hides the failure instead of fixing it; fix the "
                                 "code under test (or the test's wrong expectation) instead."))
        elif _count(_TEST_CASE, _removed(fp)) > _count(_TEST_CASE, _added(fp)):
            out.append(Rejection("gate.test_deleted", p, f"The patch removes test cases from `{p}`. "
                                 "Removing a failing test hides the failure; keep the test and fix "
                                 "the code it tests."))
        elif fp.removed and not fp.added and fp.removed >= 3 and not any(
            line.strip() for line in _added(fp)
        ) and _count(_ASSERTION, _removed(fp)):
            out.append(Rejection("gate.test_deleted", p, f"The patch empties test code in `{p}`. "
                                 "Keep the test's checks and fix the code under test instead."))
    if not s.allow_test_skips:
        skips = [line.strip() for line in _added(fp) if _SKIP.search(line)]
        if skips:
            out.append(Rejection("gate.test_skip", p, f"The patch skips or disables a test in `{p}` "
                                 f"(`{skips[0][:80]}`). A skipped test is not a fix: make the test "
                                 "pass by fixing the code it tests."))
    # production code asserts too (Debug.Assert, guard asserts); only tests' checks are gated
    looks_like_test = is_test_path(p) or bool(_count(_TEST_CASE, _added(fp) + _removed(fp)))
    # assertions that go with a removed test case are that gate's business, not this one's
    already_gated = _count(_TEST_CASE, _removed(fp)) > _count(_TEST_CASE, _added(fp))
    if not s.allow_assertion_changes and not fp.is_deleted and not already_gated:
        trivial = [line.strip() for line in _added(fp) if _TRIVIAL_ASSERTION.search(line)]
        if trivial:
            out.append(Rejection("gate.assertion_weakened", p, f"The patch adds an assertion that "
                                 f"cannot fail in `{p}` (`{trivial[0][:80]}`). Keep the original "
                                 "check and fix the code under test."))
        elif looks_like_test and _count(_ASSERTION, _removed(fp)) > _count(_ASSERTION, _added(fp)):
            out.append(Rejection("gate.assertion_weakened", p, f"The patch removes assertions from "
                                 f"`{p}` without replacing them. Keep every check (change an expected "
                                 "value only when the test itself is wrong, and say why in the "
                                 "summary) and fix the code under test."))
    return out


def _code_gates(fp: FilePatch, s: GateSettings) -> list[Rejection]:
    p = fp.path
    out: list[Rejection] = []
    added = _added(fp)
    if not s.allow_warning_suppression:
        hits = [line.strip() for line in added if _SUPPRESSION.search(line)]
        if hits:
            out.append(Rejection("gate.warning_suppressed", p, f"The patch suppresses a warning in "
                                 f"`{p}` (`{hits[0][:80]}`). Fix the code the warning is about "
                                 "instead of silencing it."))
    if not s.allow_strictness_changes:
        off = [line.strip() for line in added if _STRICTNESS_OFF.search(line)]
        dropped = _count(_STRICTNESS_ON, _removed(fp)) > _count(_STRICTNESS_ON, added)
        if off or dropped:
            what = f"`{off[0][:80]}`" if off else "removes a warnings-as-errors or nullable setting"
            out.append(Rejection("gate.strictness_lowered", p, f"The patch lowers the compiler's "
                                 f"strictness in `{p}` ({what}). Keep TreatWarningsAsErrors and "
                                 "nullable checks on and fix the code they report."))
    if not s.allow_empty_catch:
        for block in _added_blocks(fp):
            match = _EMPTY_CATCH.search(_strip_comments(block))
            if match:
                snippet = " ".join(match[0].split())
                out.append(Rejection("gate.empty_catch", p, f"The patch adds an exception handler "
                                     f"that swallows everything in `{p}` (`{snippet[:80]}`). Handle "
                                     "the specific exception, or fix what throws it."))
                break
    return out


_GATES: tuple[Callable[[FilePatch, GateSettings], list[Rejection]], ...] = (_test_gates, _code_gates)


def run_gates(patch: Patch, settings: GateSettings) -> list[Rejection]:
    return [r for fp in patch.files if not fp.binary for gate in _GATES for r in gate(fp, settings)]
