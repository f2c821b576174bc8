"""The reviewer's answer read as hostile input, and the confidence cap it puts on a patch."""

from __future__ import annotations

from typing import Any

import pytest

from ci_agent.review import Issue, capped_confidence, open_issues, read_review, sends_back
from ci_agent.review.verdict import MAX_ISSUES, MAX_TEXT, confidence_ceiling


def _issue(severity: str = "major", dimension: str = "root_cause", **extra: Any) -> dict[str, Any]:
    return {"severity": severity, "dimension": dimension, "message": "it hides the error", **extra}


def test_a_well_formed_review_is_read_whole() -> None:
    review = read_review({"verdict": "revise", "summary": " Fix the cause. ",
                          "issues": [_issue("critical", "test_weakened", file="tests/t.py", line=4),
                                     _issue("minor", "style", file=None, line=None)]})
    assert review.verdict == "revise" and review.read and review.summary == "Fix the cause."
    assert review.issues == (Issue("critical", "test_weakened", "it hides the error", "tests/t.py", 4),
                             Issue("minor", "style", "it hides the error"))
    assert review.count("critical") == 1 and sends_back(review)


@pytest.mark.parametrize(("answer", "why"), [
    (None, "not an object"),
    ("approve", "not an object"),
    ({"verdict": "APPROVE", "issues": [], "summary": "ok"}, "no known verdict"),
    ({"verdict": "lgtm", "issues": [], "summary": "ok"}, "no known verdict"),
    ({"issues": [], "summary": "ok"}, "no known verdict"),
    ({"verdict": "approve", "issues": [], "summary": 3}, "no summary"),
    ({"verdict": "approve", "summary": "ok"}, "no list of issues"),
    ({"verdict": "approve", "issues": "none", "summary": "ok"}, "no list of issues"),
    ({"verdict": "approve", "issues": [_issue("blocker")], "summary": "ok"}, "no known severity"),
    ({"verdict": "approve", "issues": [_issue(dimension="vibes")], "summary": "ok"}, "no known dimension"),
    ({"verdict": "approve", "issues": [{"severity": "minor", "dimension": "style"}], "summary": "ok"},
     "no message"),
    ({"verdict": "approve", "issues": [_issue(message=["x"])], "summary": "ok"}, "no message"),
    ({"verdict": "approve", "issues": [_issue(line="4")], "summary": "ok"}, "not a line number"),
    ({"verdict": "approve", "issues": [_issue(line=True)], "summary": "ok"}, "not a line number"),
    ({"verdict": "approve", "issues": [_issue(file={"a": 1})], "summary": "ok"}, "not a string"),
    ({"verdict": "approve", "issues": ["critical"], "summary": "ok"}, "not an object"),
    ({"verdict": "approve", "issues": [_issue("minor")] * (MAX_ISSUES + 1), "summary": "ok"}, "issues"),
])
def test_a_malformed_answer_is_no_verdict_never_an_approval(answer: object, why: str) -> None:
    review = read_review(answer)
    assert review.verdict == "none" and not review.read and why in review.problem
    assert not sends_back(review)
    # no verdict caps the confidence as one critical issue would
    assert capped_confidence(0.95, open_issues(review)) == 0.3


def test_long_texts_are_cut_not_refused() -> None:
    review = read_review({"verdict": "approve", "summary": "s" * 50_000,
                          "issues": [_issue("minor", "style", message="m" * 50_000, file="f" * 5000)]})
    assert review.read and len(review.summary) <= MAX_TEXT + 20
    assert len(review.issues[0].message) <= MAX_TEXT + 20 and len(review.issues[0].file) <= 320


@pytest.mark.parametrize(("severities", "ceiling"), [
    ((), 1.0),
    (("minor",), 0.95),
    (("major",), 0.85),
    (("major", "major", "major"), 0.55),
    (("major", "minor", "minor"), 0.75),
    (("critical",), 0.3),
    (("critical", "critical"), 0.2),
    (("critical", "major", "major", "major", "major", "major"), 0.25),
    (("critical",) * 5, 0.0),
    (("minor",) * 40, 0.0),
])
def test_the_confidence_ceiling_is_arithmetic_on_the_open_issues(severities: tuple[str, ...],
                                                                 ceiling: float) -> None:
    issues = [Issue(s, "root_cause", "x") for s in severities]
    assert confidence_ceiling(issues) == pytest.approx(ceiling)
    assert capped_confidence(1.0, issues) == pytest.approx(ceiling)
    assert capped_confidence(0.1, issues) == pytest.approx(min(0.1, ceiling))  # a cap never raises it


def test_an_approval_with_a_critical_issue_is_still_capped() -> None:
    review = read_review({"verdict": "approve", "summary": "fine",
                          "issues": [_issue("critical", "security")]})
    assert review.verdict == "approve" and capped_confidence(0.99, open_issues(review)) == 0.3


def test_only_critical_or_major_issues_send_a_revise_back() -> None:
    minor = read_review({"verdict": "revise", "summary": "nits", "issues": [_issue("minor", "style")]})
    major = read_review({"verdict": "revise", "summary": "no", "issues": [_issue("major")]})
    rejected = read_review({"verdict": "reject", "summary": "no", "issues": [_issue("critical")]})
    assert (sends_back(minor), sends_back(major), sends_back(rejected)) == (False, True, False)
