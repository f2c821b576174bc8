"""The reviewer's answer, read as hostile input, and the gate it puts on the confidence.

`read_review(tool_input)` turns the `submit_review` tool call's input into a `Review`. Anything the
schema does not allow — an unknown verdict, a missing or non-string field, an issue with an
unknown severity or dimension, more than `MAX_ISSUES` issues — is no verdict (`NO_VERDICT`, with
`problem` saying why): never a crash, never an approval. Long texts are cut, not refused.

`capped_confidence(confidence, issues)` is the gate in code: whatever the fixer and the reviewer
wrote, the confidence shown is at most
    1.0 - 0.15 * majors - 0.05 * minors, and at most 0.3 (less 0.1 per further one) with a critical.
Why these numbers: a critical issue means the reviewer found the patch wrong where it matters
(symptom patched, test weakened, a security hole), so the figure must read "unlikely" whatever
else is said; a major issue is a real doubt, three of them pull a patch under one half; a minor
one (style, naming) only nudges. No verdict counts as one critical issue: a review that could not
be read vouches for nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

VerdictKind = Literal["approve", "revise", "reject", "none"]
APPROVE, REVISE, REJECT, NO_VERDICT = "approve", "revise", "reject", "none"
SEVERITIES = ("critical", "major", "minor")
DIMENSIONS = ("root_cause", "test_weakened", "behaviour_change", "security", "style")
MAX_ISSUES = 40  # more is not a review, it is noise (or an attack on the PR body)
MAX_TEXT = 1000  # characters kept of one message or the summary
MAX_PATH = 300

CRITICAL_CAP = 0.3
CRITICAL_STEP = 0.1
MAJOR_STEP = 0.15
MINOR_STEP = 0.05


@dataclass(frozen=True, slots=True)
class Issue:
    severity: str  # one of SEVERITIES
    dimension: str  # one of DIMENSIONS
    message: str
    file: str = ""
    line: int = 0  # 0: none given

    def to_json(self) -> dict[str, Any]:
        return {"severity": self.severity, "dimension": self.dimension, "file": self.file,
                "line": self.line, "message": self.message}


@dataclass(frozen=True, slots=True)
class Review:
    verdict: str  # approve | revise | reject | none (no verdict: `problem` says why)
    issues: tuple[Issue, ...] = ()
    summary: str = ""
    problem: str = ""

    @property
    def read(self) -> bool:
        return self.verdict != NO_VERDICT

    def count(self, severity: str) -> int:
        return sum(1 for issue in self.issues if issue.severity == severity)

    def to_json(self) -> dict[str, Any]:
        return {"verdict": self.verdict, "issues": [i.to_json() for i in self.issues],
                "summary": self.summary, "problem": self.problem}


def no_verdict(problem: str) -> Review:
    return Review(NO_VERDICT, problem=problem)


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + " [... cut]"


def _issue(raw: object, index: int) -> Issue | str:
    """The issue, or why it is not one."""
    if not isinstance(raw, Mapping):
        return f"issue {index} is not an object"
    severity, dimension, message = raw.get("severity"), raw.get("dimension"), raw.get("message")
    if severity not in SEVERITIES:
        return f"issue {index} has no known severity"
    if dimension not in DIMENSIONS:
        return f"issue {index} has no known dimension"
    if not isinstance(message, str) or not message.strip():
        return f"issue {index} has no message"
    file, line = raw.get("file", ""), raw.get("line", 0)
    if file is None:
        file = ""
    if line is None:
        line = 0
    if not isinstance(file, str):
        return f"issue {index}: file is not a string"
    if not isinstance(line, int) or isinstance(line, bool) or line < 0:
        return f"issue {index}: line is not a line number"
    return Issue(str(severity), str(dimension), _cut(message.strip(), MAX_TEXT),
                 _cut(" ".join(file.split()), MAX_PATH), line)


def read_review(tool_input: object) -> Review:
    """The `submit_review` input as a `Review`; anything malformed is no verdict."""
    if not isinstance(tool_input, Mapping):
        return no_verdict("the review's answer is not an object")
    verdict = tool_input.get("verdict")
    if verdict not in (APPROVE, REVISE, REJECT):
        return no_verdict("the review named no known verdict")
    summary, raw_issues = tool_input.get("summary"), tool_input.get("issues")
    if not isinstance(summary, str):
        return no_verdict("the review has no summary")
    if not isinstance(raw_issues, list):
        return no_verdict("the review has no list of issues")
    if len(raw_issues) > MAX_ISSUES:
        return no_verdict(f"the review lists {len(raw_issues)} issues (at most {MAX_ISSUES} are read)")
    issues: list[Issue] = []
    for index, raw in enumerate(raw_issues, 1):
        issue = _issue(raw, index)
        if isinstance(issue, str):
            return no_verdict(f"the review is malformed: {issue}")
        issues.append(issue)
    return Review(str(verdict), tuple(issues), _cut(summary.strip(), MAX_TEXT))


def open_issues(review: Review) -> tuple[Issue, ...]:
    """The issues the confidence is capped by: no verdict stands for one critical issue."""
    if review.read:
        return review.issues
    return (Issue("critical", "root_cause", "the review gave no verdict"),)


def confidence_ceiling(issues: Iterable[Issue]) -> float:
    counts = {severity: 0 for severity in SEVERITIES}
    for issue in issues:
        counts[issue.severity] = counts.get(issue.severity, 0) + 1
    ceiling = 1.0 - MAJOR_STEP * counts["major"] - MINOR_STEP * counts["minor"]
    if counts["critical"]:
        ceiling = min(ceiling, CRITICAL_CAP - CRITICAL_STEP * (counts["critical"] - 1))
    return max(0.0, round(ceiling, 6))


def capped_confidence(confidence: float, issues: Iterable[Issue]) -> float:
    """`confidence` no higher than the reviewer's open issues allow (the module says how)."""
    return min(max(0.0, min(1.0, confidence)), confidence_ceiling(issues))


def sends_back(review: Review) -> bool:
    """A revision worth another round: `revise` with a critical or major issue. A `revise` with
    minor issues only ships with them listed (another paid round for style is not worth it)."""
    return review.verdict == REVISE and any(i.severity in ("critical", "major") for i in review.issues)
