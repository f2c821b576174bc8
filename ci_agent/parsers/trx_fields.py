"""Field-level TRX rules: outcomes, durations, frame locations, names (pure functions).

Kept apart from the streaming walk in `trx.py` so other parts (distill, renderers) can reuse
them without the parser.
"""

from __future__ import annotations

import re

from ci_agent.model import Outcome

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
