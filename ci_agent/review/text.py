"""The review in words: the findings sent back to the fixer with a `revise`, and the verdict
summary of the PR/MR body and the job summary. The reviewer's text is a model's, which read
untrusted logs and code: fenced as data for the fixer, rendered untrusted for people."""

from __future__ import annotations

from collections.abc import Callable

from ci_agent.redact import fence
from ci_agent.render.prose import Prose
from ci_agent.render.text import md_code
from ci_agent.render.untrusted import untrusted_md_line
from ci_agent.review.verdict import SEVERITIES, Issue, Review

_SAY = Prose("review.md.j2")
_VERDICT_WORDS = {"approve": "approved", "revise": "asked for a revision", "reject": "rejected",
                  "none": "gave no verdict"}


def issue_line(issue: Issue) -> str:
    where = f"{issue.file}:{issue.line}" if issue.file and issue.line else issue.file
    return f"[{issue.severity}, {issue.dimension}]" + (f" {where}:" if where else "") + f" {issue.message}"


def feedback(review: Review, round_number: int, max_rounds: int, redact: Callable[[str], str]) -> str:
    """The tool_result that answers the fixer's accepted submit_patch with the reviewer's findings."""
    findings = "\n".join(f"- {issue_line(i)}" for i in review.issues)
    if review.summary:
        findings += f"\nSummary: {review.summary}"
    return _SAY("revise", round=round_number, max_rounds=max_rounds,
                issues=fence("reviewer findings", redact(findings)))


def dry_run_note(model: str) -> str:
    return _SAY("dry_run", model=model)


def _severities(review: Review) -> str:
    counts = [f"{review.count(s)} {s}" for s in SEVERITIES if review.count(s)]
    return ", ".join(counts) if counts else "no issues"


def review_markdown(review: Review, rounds: int, confidence: float, stated: float) -> list[str]:
    """The verdict summary: verdict, issues by severity, the capped confidence."""
    head = f"**Review:** the reviewer {_VERDICT_WORDS.get(review.verdict, review.verdict)}"
    head += f" after {rounds} round(s)" if rounds > 1 else ""
    if review.read:
        head += f"; {_severities(review)}."
    else:
        head += f" ({untrusted_md_line(review.problem)}); the patch went on unreviewed."
    out = [head]
    if review.summary:
        out.append(f"**Reviewer's summary:** {untrusted_md_line(review.summary)}")
    if review.issues:
        out.append("**Open issues:**\n" + "\n".join(
            f"- **{i.severity}** ({i.dimension})" + (f" {md_code(_place(i))}" if i.file else "")
            + f": {untrusted_md_line(i.message)}" for i in review.issues))
    if confidence < stated:
        out.append(f"**Confidence after review:** {confidence:.2f} (capped from {stated:.2f} by the "
                   "open issues)")
    return out


def _place(issue: Issue) -> str:
    return f"{issue.file}:{issue.line}" if issue.line else issue.file
