"""The adversarial reviewer (issue 16, DESIGN.md §3 "review"): a second model call that judges an
accepted patch from the failure report, the patch and the code it touches — never the fixer's
reasoning — and answers through the `submit_review` tool (`request`, `call`). Its answer is read
as hostile input and gates the confidence the PR shows in code (`verdict`); `text` words it for
the fixer and for people. The engine's use of it: `ci_agent.engine.attempt_review`."""

from ci_agent.review.call import Reviewed, ask_review, read_answer
from ci_agent.review.request import ReviewerModel, excerpts, review_request, review_user_text, reviewer_model
from ci_agent.review.verdict import (
    APPROVE,
    NO_VERDICT,
    REJECT,
    REVISE,
    Issue,
    Review,
    capped_confidence,
    open_issues,
    read_review,
    sends_back,
)

__all__ = ["APPROVE", "NO_VERDICT", "REJECT", "REVISE", "Issue", "Review", "Reviewed", "ReviewerModel",
           "ask_review", "capped_confidence", "excerpts", "open_issues", "read_answer", "read_review",
           "review_request", "review_user_text", "reviewer_model", "sends_back"]
