"""`dotnet test` console output (no TRX): failed tests, summary counts, run-level errors.

Three printers, described with sources in shared/reference/msbuild-format.md §4-5:
- VSTest console logger: `  Failed <FQN> [<dur>]`, `  Error Message:`, `  Stack Trace:`, per-assembly
  `Failed!  - Failed: n, Passed: n, Skipped: n, Total: n, ...` (localized, so read by shape), or the
  older `Total tests: n` block. xUnit's own `[xUnit.net ..] Name [FAIL]` repeats VSTest's line.
- VSTest under the terminal logger: `<file>(<line>): error TESTERROR:` + an indented body, and
  `Test summary: total: n, failed: n, ...` (`;` where the culture's list separator is `;`).
- Microsoft.Testing.Platform: `failed <name> (<dur>)` + an indented body, a `Test run summary:`
  block, `Test run completed with non-success exit code: n`.

One pass; only the failure being read is held, capped, so memory stays flat. Lines are gated on
their first characters before any regex runs, because most lines of a CI log are build output.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from enum import Enum, auto

from ci_agent.parsers.dotnet_test_lines import (
    FRAME_RE,
    MAX_BLOCK_LINES,
    MAX_LINE_KEPT,
    MTP_WORDS,
    VS_SUMMARY_RE,
    Pending,
    frames,
    indent_of,
    is_vs_boundary,
    join_lines,
    mtp_case,
    mtp_result,
    parse_duration,
    tl_case,
    vs_banner,
    vs_result,
    xunit_case,
)
from ci_agent.report import Outcome, ParseResult, RunError, TestCase, TestCounts

MAX_FAILURES = 100_000
MAX_RUN_ERRORS = 100
SNIFF_LINES = 2000

_VS_OLD_TOTAL_RE = re.compile(r"^\s*Total tests:\s*(\d+)\s*$")
_VS_OLD_PART_RE = re.compile(r"^\s*(Passed|Failed|Skipped)\s*:\s*(\d+)\s*$")
_XUNIT_FAIL_RE = re.compile(r"^\[xUnit\.net [\d:.]+\](?P<indent>\s+)(?P<name>\S.*?) \[FAIL\]\s*$")
_XUNIT_LINE_RE = re.compile(r"^\[xUnit\.net [\d:.]+\](?P<rest>.*)$")
_TL_ERROR_RE = re.compile(
    r"^(?P<indent>\s*+)(?:(?P<file>\S.*?)\((?P<line>\d+)(?:[,-]\d+)*\)\s*:\s*)?"
    r"error (?:TESTERROR|VSTEST1)\s*:\s?(?P<rest>.*)$"
)
_MTP_ASSEMBLY_RE = re.compile(  # `<dll> (net8.0|x64) failed with 1 error(s) (..)` and its siblings
    r"^\s*\S.*\([^()|]+\|[^()]+\) (?:failed|passed|Zero tests|skipped|abort|cancel)"
)
_MTP_STOP = ("Running tests from ", "Test run summary:", "Exit code:", "Test run completed",
             "Test run aborted")
_SUMMARY_KEY_RE = re.compile(r"\b(total|failed|succeeded|skipped):\s*(\d+)")
_NUMBER_PAIR_RE = re.compile(r"[^\W\d_][^:;,]{0,40}:\s*(\d+)")
_EXIT_CODE_RE = re.compile(r"Test run completed with non-success exit code: (\d+)")
_RUN_ERROR_STARTS = ("The active test run was aborted", "Test Run Aborted", "Test host process crashed",
                     "No test is available in", "Test run aborted")
# testfx prints Canceled *and* Timeout as `failed (canceled)`; we cannot tell them apart, both fail.
_MTP_OUTCOMES = {"timed out": Outcome.TIMEOUT, "cancelled": Outcome.ABORTED, "canceled": Outcome.ABORTED,
                 "failed (canceled)": Outcome.ABORTED, "failed (cancelled)": Outcome.ABORTED,
                 "failed (timed out)": Outcome.TIMEOUT}
_SNIFF_RE = re.compile(
    r"^Test run for |Starting test execution|A total of \d+ test files? matched|^VSTest version|"
    r"Microsoft \(R\) Test Execution|^Running tests from |^\s*Test (?:run )?summary:|^NUnit Adapter |"
    r"error (?:TESTERROR|VSTEST1)|^\s*(?:Passed|Failed)!\s+-|^\[xUnit\.net |^\s*Total tests: \d|"
    # A CI step header (`##[group]Run dotnet test ...`) precedes build output that may fill the head.
    r"(?:^|\s)dotnet(?:\.exe)? test\b"
)


class _Mode(Enum):
    IDLE = auto()
    VS_HEAD = auto()  # after `Failed X [..]`, before a banner
    VS_MSG = auto()
    VS_STACK = auto()
    VS_OUT = auto()
    TL_BODY = auto()
    MTP_BODY = auto()
    XUNIT_BODY = auto()
    MTP_SUMMARY = auto()
    OLD_SUMMARY = auto()


class DotnetTestConsumer:
    def __init__(self, source: str) -> None:
        self.source = source
        self._mode = _Mode.IDLE
        self._pending: Pending | None = None
        self._failures: list[TestCase] = []
        self._seen: set[tuple[str, str, str | None, str | None]] = set()
        self._names: set[str] = set()
        self._xunit_only: list[TestCase] = []
        self._counts: TestCounts | None = None
        self._block: dict[str, int] = {}  # keys of the summary block being read
        self._block_lines = 0
        self._mtp_failed_last: int | None = None
        self._mtp_seen = False  # an MTP `Running tests from` line was read
        self._run_errors: list[RunError] = []
        self._dropped_failures = 0
        self._truncated = 0

    def feed(self, line: str) -> None:
        mode = self._mode
        if mode is not _Mode.IDLE:
            p = self._pending
            # Fast path for the bulk of a failure block: indented stack frames.
            stack_line = mode is _Mode.VS_STACK and line.startswith("   ")
            if stack_line and p is not None and p.kept < MAX_BLOCK_LINES:
                p.kept += 1
                p.stack.append(line[:MAX_LINE_KEPT])
                return
            if self._continue(line):
                return
        head = line[:80].lstrip()
        if not head:
            return
        c0 = head[0]
        if "!" in head and self._vs_summary(line):
            return
        if c0 == "F" or c0 == "X":
            if head.startswith(("Failed ", "X ")):
                result = vs_result(line)
                if result and result[0] in ("Failed", "X"):
                    self._start(Pending(result[1], duration_s=parse_duration(result[2])), _Mode.VS_HEAD)
                    return
        elif c0 == "T":
            if self._t_line(line, head):
                return
        elif c0 in "ftcsp":
            mtp = mtp_result(line, self._mtp_seen) if head.startswith(MTP_WORDS) else None
            if mtp:
                self._start_mtp(*mtp)
                return
        elif c0 == "[":
            if line.endswith("[FAIL]") and head.startswith("[xUnit.net "):
                m = _XUNIT_FAIL_RE.match(line)
                if m:
                    self._start(Pending(m.group("name"), indent=len(m.group("indent"))), _Mode.XUNIT_BODY)
                    return
        elif c0 == "R" and head.startswith("Running tests from "):
            self._end_block()
            self._mtp_seen = True
            return
        elif c0 == "N" and head.startswith("No test is available in"):
            self._run_error(line.strip())
        if "TEST" in line and ("TESTERROR" in line or "VSTEST1" in line):
            m = _TL_ERROR_RE.match(line)
            if m:
                self._start_tl(m)

    def finish(self) -> ParseResult:
        self._end_block()
        for case in self._xunit_only:  # xUnit said [FAIL] but VSTest never printed it (quiet logger)
            if case.name not in self._names:
                self._add(case)
        notes = []
        if self._dropped_failures:
            notes.append(f"{self._dropped_failures} further failed test(s) not kept (cap {MAX_FAILURES})")
        if self._truncated:
            notes.append(f"{self._truncated} failure text(s) cut at {MAX_BLOCK_LINES} lines")
        return ParseResult(format="dotnet_test", failures=self._failures, counts=self._counts,
                           run_errors=self._run_errors, notes=notes)

    # -- lines starting with `T` ------------------------------------------------------------------
    def _t_line(self, line: str, head: str) -> bool:
        """Summaries and run errors (all start with `T`); False when `line` is none of them."""
        if head.startswith("Test summary:"):
            self._tl_summary(line.split("Test summary:", 1)[1])
        elif head.startswith("Test run summary:"):
            self._end_block()
            self._block, self._block_lines, self._mode = {}, 0, _Mode.MTP_SUMMARY
            self._summary_line(line, first=True)
        elif head.startswith("Total tests:"):
            m = _VS_OLD_TOTAL_RE.match(line)
            if m:
                self._end_block()
                self._block, self._mode = {"total": int(m.group(1))}, _Mode.OLD_SUMMARY
        elif head.startswith("Test run completed"):
            m = _EXIT_CODE_RE.search(line)
            failed = self._mtp_failed_last
            if m and (failed == 0 if failed is not None else not self._failures):
                self._run_error(f"test run completed with non-success exit code {m.group(1)} "
                                "but reported no failed test")
            self._mtp_failed_last = None
        elif head.startswith(_RUN_ERROR_STARTS):
            # `Test Run Aborted.` closes the `The active test run was aborted. Reason: ..` already kept.
            said = any("aborted" in e.message for e in self._run_errors)
            if not (said and head.startswith("Test Run Aborted")):
                self._run_error(line.strip())
        else:
            return False
        return True

    def _vs_summary(self, line: str) -> bool:
        m = VS_SUMMARY_RE.search(line)
        if m is None:
            return False
        self._end_block()
        failed, passed, skipped, total = (int(g) for g in m.groups())
        self._add_counts(TestCounts(total, passed, failed, skipped))
        return True

    def _tl_summary(self, rest: str) -> None:
        keyed = dict(_SUMMARY_KEY_RE.findall(rest))
        if "total" in keyed:
            self._add_counts(TestCounts(int(keyed["total"]), int(keyed.get("succeeded", 0)),
                                        int(keyed.get("failed", 0)), int(keyed.get("skipped", 0))))
            return
        numbers = [int(n) for n in _NUMBER_PAIR_RE.findall(rest)]  # localized labels: by position
        if len(numbers) >= 4:
            self._add_counts(TestCounts(numbers[0], numbers[2], numbers[1], numbers[3]))

    # -- open blocks ------------------------------------------------------------------------------
    def _start(self, pending: Pending, mode: _Mode) -> None:
        self._end_block()
        self._pending, self._mode = pending, mode

    def _start_tl(self, m: re.Match[str]) -> None:
        line_no = m.group("line")
        pending = Pending("", file=m.group("file"), line=int(line_no) if line_no else None,
                           indent=len(m.group("indent")))
        self._start(pending, _Mode.TL_BODY)
        rest = m.group("rest").strip()
        if rest.endswith("]") and " [" in rest:  # the classic logger appends ` [project]`
            rest = rest[: rest.rindex(" [")]
        if rest:
            pending.lines.append(" " * (pending.indent + 2) + rest)

    def _start_mtp(self, indent: int, word: str, name: str, dur: str | None) -> None:
        if word in ("skipped", "passed"):  # counted by the summary, not kept
            self._end_block()
            return
        self._start(Pending(name, outcome=_MTP_OUTCOMES.get(word, Outcome.FAILED),
                             duration_s=parse_duration(dur), indent=indent), _Mode.MTP_BODY)

    def _continue(self, line: str) -> bool:
        """Give `line` to the open block; False when the block ended and `line` starts something new."""
        mode, p = self._mode, self._pending
        if mode is _Mode.MTP_SUMMARY:
            return self._summary_line(line)
        if mode is _Mode.OLD_SUMMARY:
            m = _VS_OLD_PART_RE.match(line)
            if m:
                self._block[m.group(1).lower()] = int(m.group(2))
                return True
        elif p is None:
            pass
        elif mode is _Mode.TL_BODY:
            if not line.strip() or indent_of(line) > p.indent:
                p.keep(p.lines, line)
                return True
        elif mode is _Mode.MTP_BODY:
            if self._mtp_continues(line, p.indent):
                p.keep(p.lines, line)
                return True
        elif mode is _Mode.XUNIT_BODY:
            m = _XUNIT_LINE_RE.match(line)
            if m and indent_of(m.group("rest")) > p.indent and not line.endswith("[FAIL]"):
                p.keep(p.lines, m.group("rest"))
                return True
        else:
            return self._vs_line(line, p)
        self._end_block()
        return False

    def _vs_line(self, line: str, p: Pending) -> bool:
        mode = self._mode
        banner = vs_banner(line) if line.endswith(":") else None
        if banner is not None:
            if banner == "Error Message:" and mode is _Mode.VS_HEAD:
                self._mode = _Mode.VS_MSG
                return True
            if banner == "Stack Trace:" and mode is not _Mode.VS_OUT:
                self._mode = _Mode.VS_STACK
                return True
            if banner.endswith("Messages:"):
                self._mode = _Mode.VS_OUT
                return True
        if mode is _Mode.VS_STACK:
            if not line.strip() or line.startswith(("   ", "---", "\t")) or FRAME_RE.match(line):
                p.keep(p.stack, line)
                return True
        elif not is_vs_boundary(line) and (mode is not _Mode.VS_HEAD or not line.strip()):
            if mode is _Mode.VS_MSG:  # VSTest indents only the first message line; the rest is as written
                p.keep(p.message, line[3:] if not p.message and line.startswith("   ") else line)
            elif mode is _Mode.VS_OUT:
                p.keep(p.stdout, line)
            return True
        self._end_block()
        return False

    def _mtp_continues(self, line: str, indent: int) -> bool:
        stripped = line.lstrip()
        if stripped.startswith(_MTP_STOP):
            return False
        if stripped and indent_of(line) <= indent:
            if stripped.startswith(MTP_WORDS) and mtp_result(line, self._mtp_seen):
                return False
            if line.endswith(")") and _MTP_ASSEMBLY_RE.match(line):
                return False
        return True  # col-0 message continuations (xUnit `Expected:`) belong to the body

    def _summary_line(self, line: str, first: bool = False) -> bool:
        stripped = line.strip()
        if not first and (stripped.startswith(_MTP_STOP) or (stripped and not line[0].isspace())):
            self._end_block()
            return False
        self._block_lines += 1
        if first and "Aborted" in stripped:
            self._run_error(stripped)
        for key, value in _SUMMARY_KEY_RE.findall(line):
            self._block[key] = int(value)
        if self._block_lines > 10_000:
            self._end_block()
        return True

    def _end_block(self) -> None:
        mode, p = self._mode, self._pending
        self._mode, self._pending = _Mode.IDLE, None
        if mode is _Mode.MTP_SUMMARY or mode is _Mode.OLD_SUMMARY:
            block, self._block = self._block, {}
            if "total" in block:
                passed = block.get("succeeded", block.get("passed", 0))
                failed = block.get("failed", 0)
                self._add_counts(TestCounts(block["total"], passed, failed, block.get("skipped", 0)))
                if mode is _Mode.MTP_SUMMARY:
                    self._mtp_failed_last = failed
            return
        if p is None:
            return
        self._truncated += p.dropped > 0
        if mode is _Mode.TL_BODY:
            self._add(tl_case(p))
        elif mode is _Mode.MTP_BODY:
            self._add(mtp_case(p))
        elif mode is _Mode.XUNIT_BODY:
            if len(self._xunit_only) < MAX_FAILURES:
                self._xunit_only.append(xunit_case(p))
        else:
            self._add(TestCase(p.name, p.outcome, message=join_lines(p.message), stack=frames(p.stack),
                               duration_s=p.duration_s, stdout=join_lines(p.stdout)))

    def _add_counts(self, counts: TestCounts) -> None:
        self._counts = counts if self._counts is None else self._counts + counts

    def _add(self, case: TestCase) -> None:
        key = (case.name, case.outcome.value, case.message, case.stack)
        if key in self._seen:
            return
        if len(self._failures) >= MAX_FAILURES:
            self._dropped_failures += 1
            return
        self._seen.add(key)
        self._names.add(case.name)
        self._failures.append(case)

    def _run_error(self, message: str) -> None:
        if len(self._run_errors) < MAX_RUN_ERRORS and all(e.message != message for e in self._run_errors):
            self._run_errors.append(RunError(self.source, message[:MAX_LINE_KEPT]))


class DotnetTestParser:
    name = "dotnet_test"
    description = "dotnet test console output (VSTest, terminal logger, Microsoft.Testing.Platform)"

    def sniff(self, head: Sequence[str]) -> bool:
        return any(_SNIFF_RE.search(line) or ("!" in line and VS_SUMMARY_RE.search(line))
                   for line in head[:SNIFF_LINES])

    def consumer(self, source: str) -> DotnetTestConsumer:
        return DotnetTestConsumer(source)


PARSER = DotnetTestParser()
