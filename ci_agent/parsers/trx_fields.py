"""Field-level TRX rules: outcomes, durations, frame locations, names, one result's Output.

Kept apart from the streaming walk in `trx.py` so other parts (distill, renderers) can reuse
them without the parser.
"""

from __future__ import annotations

import re
from typing import Any

from ci_agent.parsers.caps import MESSAGE_BYTES, STACK_BYTES, cap, cap_name
from ci_agent.parsers.xmlsafe import local_name, text_of
from ci_agent.report import Outcome, TestCase

STDOUT_LIMIT = 4096
_OTHER_STREAMS = (("stderr", "StdErr"), ("debug trace", "DebugTrace"), ("messages", "TextMessages"))

OUTCOMES: dict[str, Outcome] = {
    "Passed": Outcome.PASSED,
    "Failed": Outcome.FAILED,
    "Error": Outcome.ERROR,
    "Timeout": Outcome.TIMEOUT,
    "Aborted": Outcome.ABORTED,
    "NotExecuted": Outcome.SKIPPED,
    "Inconclusive": Outcome.INCONCLUSIVE,
    "NotRunnable": Outcome.ERROR,  # bad signature / missing attribute: a setup failure
    "PassedButRunAborted": Outcome.PASSED,  # plus a RunError: the run itself was aborted
    "Warning": Outcome.PASSED,  # noted
    "Disconnected": Outcome.ABORTED,  # the agent went away: an infrastructure failure
    "Completed": Outcome.PASSED,  # noted
    "InProgress": Outcome.SKIPPED,  # noted
    "Pending": Outcome.SKIPPED,  # noted
}
KNOWN_RESULT_KINDS = frozenset(
    {"UnitTestResult", "TestResultAggregation", "WebTestResult", "GenericTestResult",
     "ManualTestResult", "TestResult", "LoadTestResult"}
)
# Digit runs are bounded: int() refuses more than 4300 digits, and hostile files try that.
_DURATION_RE = re.compile(r"^\s*(?:(\d{1,9})\.)?(\d{1,9}):(\d{1,9}):(\d{1,9}(?:\.\d{1,15})?)\s*$")
# The first frame with a file: any UI language's "line" word; Windows, `/_/`, `/` and `~/` paths.
# Two linear searches (the line suffix, then where the path starts) instead of one lazy match,
# which is quadratic on a long hostile line.
_LINE_SUFFIX_RE = re.compile(
    r":(?:line|línea|linea|Zeile|ligne|riga|regel|linha|lijn|rad|linje|wiersz|řádek|satır|строка|行号|行|줄)"
    r" ?(\d{1,9})\s*$"
)
_PATH_START_RE = re.compile(r"(?:^|(?<=\s))(?=[A-Za-z]:[\\/]|[\\/]|~[\\/])")
MAX_FRAMES_SCANNED = 500


def qualified_name(classname: str | None, name: str) -> str:
    """The full name for reports: `Class.Method` unless `name` is already qualified by it."""
    if not classname or name.startswith(classname + "."):
        return name
    return f"{classname}.{name}"


def parse_duration(text: str | None) -> float | None:
    """TimeSpan text (`00:00:18`, `00:00:01.2345678`, `1.02:03:04.5`) -> seconds, or None."""
    if not text:
        return None
    m = _DURATION_RE.match(text)
    if m is None:
        return None
    days, hours, minutes, seconds = m.groups()
    return int(days or 0) * 86400 + int(hours) * 3600 + int(minutes) * 60 + float(seconds)


def first_frame_location(stack: str | None) -> tuple[str | None, int | None]:
    """File and line of the first stack frame that names a file, in any UI language."""
    if not stack:
        return None, None
    for frame in stack.splitlines()[:MAX_FRAMES_SCANNED]:
        suffix = _LINE_SUFFIX_RE.search(frame)
        if suffix is None:
            continue
        start = _PATH_START_RE.search(frame, 0, suffix.start())
        if start is not None and start.start() < suffix.start():
            return frame[start.start():suffix.start()].strip(), int(suffix.group(1))
    return None, None


def map_outcome(raw: str | None) -> Outcome:
    """A TRX outcome -> ours. Missing or unknown is an error: never a silent pass."""
    if raw is None:
        return Outcome.ERROR
    return OUTCOMES.get(raw.strip(), Outcome.ERROR)


def child(elem: Any, name: str) -> Any:
    """The first child with this local name, in any namespace or none."""
    return elem.find("{*}" + name)


def _stream_text(elem: Any) -> str | None:
    """Text of an output stream; TextMessages holds one <Message> per line."""
    if elem is not None and len(elem) and all(local_name(m.tag) == "Message" for m in elem):
        return "\n".join(text_of(m).strip() for m in elem)
    return _text(elem)


def _text(elem: Any) -> str | None:
    if elem is None:
        return None
    return text_of(elem)


def read_output(result: Any) -> tuple[str | None, str | None, str | None]:
    """(message, stack, output) from a result's Output. The console output is StdOut, then the
    other streams under headings (StdErr, DebugTrace, MSTest v1 TextMessages), bounded."""
    output = child(result, "Output")
    if output is None:
        return None, None, None
    error_info = child(output, "ErrorInfo")
    message = _text(child(error_info, "Message")) if error_info is not None else None
    stack = _text(child(error_info, "StackTrace")) if error_info is not None else None
    parts = [_text(child(output, "StdOut")) or ""]
    for heading, name in _OTHER_STREAMS:
        text = _stream_text(child(output, name))
        if text and text.strip():
            parts.append(f"[{heading}]\n{text}")
    console = "\n".join(p for p in parts if p) or None
    if console is not None and len(console) > STDOUT_LIMIT:
        console = console[:STDOUT_LIMIT] + "\n[... output cut ...]"
    return message, stack, console


def make_case(result: Any) -> TestCase:
    raw = result.get("outcome")
    message, stack, stdout = read_output(result)
    file, line = first_frame_location(stack)
    name = result.get("testName") or result.get("name") or result.get("testId") or "(unnamed test)"
    return TestCase(
        name=cap_name(name),
        outcome=map_outcome(raw),
        message=cap(message, MESSAGE_BYTES),
        stack=cap(stack, STACK_BYTES),
        file=file,
        line=line,
        duration_s=parse_duration(result.get("duration")),
        stdout=stdout,
    )
