"""Money (issue 16) on GitHub and on GitLab: the cost of a run is the fake's usage times the price
table, shown in the outputs and the status comment; each cap (attempt, fix branch, day) stops the
loop before the model call that would pass it, escalates (exit 3) with the cap and the amount
spent in the comments, and reruns make no call.

Every amount expected here is worked out by hand from Anthropic's price of Claude Sonnet 4.5
(USD per million tokens: $3 input, $3.75 cache write, $0.30 cache read, $15 output), never by
calling ci-agent's own pricing code.
"""

from __future__ import annotations

import json
from typing import Any

from ci_agent.engine.forge import parse_marker
from tests.fakes.anthropic_fake import Script
from tests.platform_scenarios.base import FIX_BRANCH, ROOT_CAUSE, SUMMARY, push_file
from tests.platform_scenarios.platforms import Platform, assert_outputs, the_status_note
from tests.platform_scenarios.steps import RATINGS, answer, diff, model_calls, version
from tests.scenarios import model_scripts as model
from tests.scenarios.sample_repos import git

MODEL = "model:\n  name: claude-sonnet-4-5\n"
# model_scripts.USAGE: 1234 input, 321 output, 900 cache write, 0 cache read
#   1234 * 3 + 321 * 15 + 900 * 3.75 = 3702 + 4815 + 3375 = 11892 micro-dollars
ONE_CALL = 0.011892
# a costly answer: 150,000 input and 1,000 output tokens = 450,000 + 15,000 micro-dollars
COSTLY = {"input_tokens": 150_000, "output_tokens": 1000, "cache_creation_input_tokens": 0,
          "cache_read_input_tokens": 0}
COSTLY_CALL = 0.465


def configure(platform: Platform, budget: str, *, review: bool = True) -> None:
    """The trusted config: the model, the caps, and (review=False) no reviewer, whose call would
    otherwise be the one a cap refuses after a costly fix."""
    off = "" if review else "review:\n  enabled: false\n"
    push_file(platform.repo, "main", ".ci-agent.yml", MODEL + off + "budget:\n" + budget)


def costing(script: Script, usage: dict[str, int]) -> Script:
    def answer_with(request: dict[str, Any]) -> dict[str, Any]:
        reply = script(request)
        assert isinstance(reply, dict)
        return {**reply, "usage": usage}
    return answer_with


def costly_fix(platform: Platform) -> None:
    fix = diff(version(platform, "broken"), version(platform, "floor"))
    platform.api.reply(costing(model.submit_patch(fix, summary=SUMMARY, root_cause=ROOT_CAUSE), COSTLY))


def escalation_note(platform: Platform) -> str:
    number = platform.fix_request().number
    (note,) = [b for b in platform.created_notes(number) if parse_marker(b) is None]
    return note


def test_the_cost_is_the_usage_times_the_price_table(platform: Platform) -> None:
    configure(platform, "  max_cost_per_attempt_usd: 2\n")
    answer(platform, "broken", "floor")

    first = platform.job(platform.ci("main"))

    assert first.exit_code == 0, str(first)
    assert_outputs(first, "committed", cost_usd=f"{ONE_CALL:.6f}")
    note = the_status_note(platform, platform.fix_request().number)["body"]
    assert "Cost on this fix branch: $0.0119." in note
    assert "$0.0119" in first.summary

    red = platform.ci(FIX_BRANCH)
    answer(platform, "floor", "fix")
    second = platform.job(red)

    assert second.exit_code == 0, str(second)
    assert_outputs(second, "committed", cost_usd=f"{2 * ONE_CALL:.6f}")  # the fix branch's total
    note = the_status_note(platform, platform.fix_request().number)["body"]
    assert "Cost on this fix branch: $0.0238." in note


def test_the_attempt_cap_stops_before_the_call_that_would_pass_it(platform: Platform) -> None:
    configure(platform, "  max_cost_per_attempt_usd: 0.5\n  max_cost_per_branch_usd: 0\n"
                        "  max_cost_per_day_usd: 0\n")
    answer(platform, "broken", "floor")
    assert platform.job(platform.ci("main")).exit_code == 0
    red = platform.ci(FIX_BRANCH)
    # attempt 2 reads a file first; that call costs $0.465, and the next one could cost more
    # than the $0.035 left under the cap
    platform.api.reply(costing(model.read_file(RATINGS), COSTLY))

    capped = platform.job(red)

    assert capped.exit_code == 3, str(capped)
    assert model_calls(platform) == 2, "the second call of attempt 2 was never sent"
    assert_outputs(capped, "escalated", cost_usd=f"{ONE_CALL + COSTLY_CALL:.6f}")
    note = escalation_note(platform)
    assert "attempt cost cap" in note and "$0.4650 spent on this attempt" in note and "cap $0.5000" in note
    status = the_status_note(platform, platform.fix_request().number)["body"]
    assert "attempt cost cap" in status and "$0.4650 spent" in status

    again = platform.job(platform.ci(FIX_BRANCH))  # a new run of the same red commit

    assert again.exit_code == 3 and again.outcome == "escalated", str(again)
    assert model_calls(platform) == 2, "the cap's mark holds every call back"


def test_the_fix_branch_cap_counts_every_run_on_the_branch(platform: Platform) -> None:
    configure(platform, "  max_cost_per_attempt_usd: 0\n  max_cost_per_branch_usd: 0.5\n"
                        "  max_cost_per_day_usd: 0\n", review=False)
    costly_fix(platform)
    first = platform.job(platform.ci("main"))
    assert first.exit_code == 0 and first.outcome == "committed", str(first)

    capped = platform.job(platform.ci(FIX_BRANCH))

    assert capped.exit_code == 3, str(capped)
    assert model_calls(platform) == 1, "no call: $0.465 spent, and any call could pass $0.50"
    assert_outputs(capped, "escalated", cost_usd=f"{COSTLY_CALL:.6f}")
    note = escalation_note(platform)
    assert "fix branch cost cap" in note and "$0.4650 spent on this fix branch" in note
    assert "cap $0.5000" in note and "max_cost_per_branch_usd" in note


def test_the_day_cap_is_kept_on_origin_and_read_by_the_next_job(platform: Platform) -> None:
    configure(platform, "  max_cost_per_attempt_usd: 0\n  max_cost_per_branch_usd: 0\n"
                        "  max_cost_per_day_usd: 0.5\n", review=False)
    costly_fix(platform)
    assert platform.job(platform.ci("main")).exit_code == 0
    origin = platform.repo.origin
    (day,) = git(origin, "ls-tree", "--name-only", "refs/ci-agent/spend").split()
    spent = json.loads(git(origin, "cat-file", "blob", f"refs/ci-agent/spend:{day}"))["spent_usd"]
    assert spent == COSTLY_CALL

    capped = platform.job(platform.ci(FIX_BRANCH))

    assert capped.exit_code == 3, str(capped)
    assert model_calls(platform) == 1
    note = escalation_note(platform)
    assert "day cost cap" in note and "$0.4650 spent on this repository today" in note
    assert "cap $0.5000" in note


def test_the_reviewers_call_is_capped_like_the_fixers(platform: Platform) -> None:
    configure(platform, "  max_cost_per_attempt_usd: 0.5\n  max_cost_per_branch_usd: 0\n"
                        "  max_cost_per_day_usd: 0\n")
    costly_fix(platform)  # $0.465 of the attempt's $0.50: the review could cost more than is left

    capped = platform.job(platform.ci("main"))

    assert capped.exit_code == 3 and capped.outcome == "escalated", str(capped)
    assert platform.api.review_requests == [], "the reviewer was never asked"
    assert platform.world.origin_tip(FIX_BRANCH) is None, "an unreviewed patch is not pushed"
    assert "attempt cost cap" in capped.stdout and "$0.4650 spent on this attempt" in capped.stdout
