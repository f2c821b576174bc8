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
_DURATION_RE = re.compile(r"^\s*(?:(\d+)\.)?(\d+):(\d+):(\d+(?:\.\d+)?)\s*$")
# The first frame with a file: any UI language's "line" word; Windows, `/_/`, `/` and `~/` paths.
_FRAME_FILE_RE = re.compile(
    r"(?:^|\s)(?P<file>(?:[A-Za-z]:[\\/]|[\\/]|~[\\/])[^\n]*?):"
    r"(?:line|línea|linea|Zeile|ligne|riga|regel|linha|lijn|rad|linje|wiersz|řádek|satır|строка|行号|行|줄)"
    r" ?(?P<line>\d+)\s*$",
    re.MULTILINE,
)
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
    m = _FRAME_FILE_RE.search(stack)
    if m is None:
        return None, None
    return m.group("file").strip(), int(m.group("line"))


def map_outcome(raw: str | None) -> Outcome:
    """A TRX outcome -> ours. Missing or unknown is an error: never a silent pass."""
    if raw is None:
        return Outcome.ERROR
    return OUTCOMES.get(raw.strip(), Outcome.ERROR)
