"""The adversarial reviewer inside an attempt (issue 16): after the patch passed the policy and,
where one is set, the verify command, and before it is committed.

- `approve` (or `revise` with minor issues only): the patch ships, its confidence capped by the
  open issues (`ci_agent.review.verdict.capped_confidence`).
- `revise` with a critical or major issue: the patch is rolled back and the findings go back to
  the fixer in its own conversation (`AskResult.resume`), as the tool_result of its
  submit_patch; its revised patch is applied, verified and reviewed again — at most
  `review.max_rounds` reviews per attempt. After the last round a patch still under `revise`
  ships with its issues listed and the confidence capped by them: the reviewer had `reject` for
  a patch that must not ship, and a person reads the change request either way.
- `reject`: a failed attempt, like a failed verify: rolled back, never pushed, recorded in the
  ledger, and the next attempt is told why (the record's summary).
- no verdict (a malformed answer, no tool call, a failed call): the patch ships, the change
  request says the review gave no verdict, and the confidence is capped as if one critical issue
  were open.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from ci_agent.config import ReviewSettings
from ci_agent.engine.budget import AttemptRecord, AttemptResult, Event, assess
from ci_agent.llm.client import ModelClient
from ci_agent.llm.types import AskResult, GiveUp, ModelSettings, PatchProposal, Usage
from ci_agent.report import Report
from ci_agent.review import (
    REJECT,
    Review,
    ask_review,
    capped_confidence,
    excerpts,
    open_issues,
    review_request,
    review_user_text,
    reviewer_model,
    sends_back,
)
from ci_agent.review.text import dry_run_note, feedback, review_markdown

Emit = Callable[..., None]
Redact = Callable[[str], str]


@dataclass(frozen=True, slots=True)
class ReviewLog:
    """The last review of an attempt, as the change request and the job summary show it."""

    review: Review
    rounds: int
    stated: float  # the fixer's confidence (after its own gates)
    confidence: float  # after the reviewer's cap

    def markdown(self) -> list[str]:
        return review_markdown(self.review, self.rounds, self.confidence, self.stated)


@dataclass(frozen=True, slots=True)
class Ship:
    proposal: PatchProposal  # confidence capped


@dataclass(frozen=True, slots=True)
class SendBack:
    feedback: str  # the findings, worded for the fixer: roll the patch back, then `revise`


@dataclass(frozen=True, slots=True)
class Revised:
    proposal: PatchProposal  # the fixer's next patch, redacted like the first


@dataclass(frozen=True, slots=True)
class Rejected:
    summary: str  # for the ledger: what was tried and why the reviewer rejected it


@dataclass(frozen=True, slots=True)
class Withdrawn:
    reason: str  # the fixer gave up (or hit a cap) after a revision request
    by_model: bool = True


Step = Ship | SendBack | Revised | Rejected | Withdrawn


class Reviewer:
    """The reviews of one attempt, and the fixer conversation they may send a patch back to.
    `usage` and `turns` count the fixer's and the reviewer's calls of the attempt together."""

    def __init__(self, settings: ReviewSettings, fixer: ModelSettings, client: ModelClient,
                 report: Report, asked: AskResult, redact: Redact, emit: Emit, number: int) -> None:
        self.settings, self.client, self.report = settings, client, report
        self.model = reviewer_model(fixer, settings.model)
        self.asked, self.redact, self.emit, self.number = asked, redact, emit, number
        self.rounds = 0
        self.review_usage = Usage()
        self.last: ReviewLog | None = None

    @property
    def usage(self) -> Usage:
        return self.asked.usage + self.review_usage

    @property
    def turns(self) -> int:
        return self.asked.turns + self.rounds

    def judge(self, proposal: PatchProposal, diff: str, workdir: Path) -> Step:
        """Review the applied patch `diff` (the worktree holds it) and say what follows."""
        self.rounds += 1
        user_text = review_user_text(self.report, diff, excerpts(workdir, diff, self.redact), self.redact)
        reviewed = ask_review(self.client, review_request(self.model, user_text))
        self.review_usage += reviewed.usage
        review = reviewed.review
        confidence = capped_confidence(proposal.confidence, open_issues(review))
        self.last = ReviewLog(review, self.rounds, proposal.confidence, confidence)
        self.emit("reviewed", attempt=self.number, round=self.rounds, verdict=review.verdict,
                  critical=review.count("critical"), major=review.count("major"),
                  minor=review.count("minor"), confidence=f"{confidence:.2f}")
        if review.verdict == REJECT:
            return Rejected(rejection_summary(proposal.summary, review))
        if sends_back(review) and self.rounds < self.settings.max_rounds and self.asked.resume:
            return SendBack(feedback(review, self.rounds, self.settings.max_rounds, self.redact))
        return Ship(replace(proposal, confidence=confidence))

    def revise(self, step: SendBack) -> Revised | Withdrawn:
        """The fixer's answer to the findings, in its own conversation (the patch is rolled back
        by now: the fixer's next patch is checked against the tree as it was)."""
        assert self.asked.resume is not None  # `judge` sends back only what can be resumed
        self.asked = self.asked.resume(step.feedback)
        answer = self.asked.answer
        if isinstance(answer, GiveUp):
            return Withdrawn(answer.reason, answer.by_model)
        return Revised(replace(answer, summary=self.redact(answer.summary),
                               root_cause=self.redact(answer.root_cause)))


def rejection_summary(summary: str, review: Review) -> str:
    """One line for the ledger (and so for the next attempt's prompt and the escalation)."""
    why = review.summary or "; ".join(i.message for i in review.issues[:3]) or "no reason given"
    return " ".join(f"{summary} — rejected by the reviewer: {why}".split())


def rejected_record(max_attempts: int, fingerprint: str, attempt_id: str, summary: str
                    ) -> Callable[[list[Event]], Event]:
    """The ledger entry of a rejected patch: a failed attempt on `fingerprint` (no failure after
    it: the patch never ran in CI)."""
    def build(events: list[Event]) -> Event:
        number = assess(events, max_attempts).next_attempt
        return AttemptRecord(number, AttemptResult.FAILED, fingerprint, "", attempt_id, summary)
    return build


def reviewer_for(settings: ReviewSettings, fixer: ModelSettings, client: ModelClient, report: Report,
                 asked: AskResult, redact: Redact, emit: Emit, number: int) -> Reviewer | None:
    """The attempt's reviewer; None with `review.enabled: false` or `max_rounds: 0`."""
    if not settings.enabled or settings.max_rounds < 1:
        return None
    return Reviewer(settings, fixer, client, report, asked, redact, emit, number)


def dry_run_message(settings: ReviewSettings, fixer: ModelSettings) -> str:
    """What a dry run says about the review that would follow ("" when it is off)."""
    if not settings.enabled or settings.max_rounds < 1:
        return ""
    return dry_run_note(reviewer_model(fixer, settings.model).settings.model)
