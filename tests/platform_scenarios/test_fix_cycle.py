"""The fix cycle across simulated CI runs, the same on GitHub (workflow_run jobs) and on GitLab
(the include's job after each pipeline): a second attempt after a red run of the fix branch, the
three-failure budget (DESIGN.md §4.3), the inputs named as a person knows them (issue 13 point
15), and the build-time change callout. Each test runs once per platform (the `platform` fixture).
"""

from __future__ import annotations

import re

from ci_agent.engine.forge import parse_marker
from ci_agent.errors import ExitCode
from tests.fakes.anthropic_fake import Fault
from tests.platform_scenarios.base import FIX_BRANCH, ROOT_CAUSE, SUMMARY
from tests.platform_scenarios.platforms import (
    Platform,
    assert_fix_outputs,
    assert_outputs,
    fail_attempts,
    the_status_note,
)
from tests.platform_scenarios.steps import (
    CONFTEST,
    NEW_CONFTEST,
    RATINGS,
    WRONG_ORDER,
    WRONG_SUMMARIES,
    answer,
    diff,
    model_calls,
    version,
)
from tests.scenarios import model_scripts as model

TEMP = re.compile(r"/tmp/|ci-agent-cycle-|ci-agent-wt")


def test_fixed_on_attempt_2(platform: Platform) -> None:
    answer(platform, "broken", "floor", summary="Avoid dividing by zero.")
    first = platform.job(platform.ci("main"))
    assert first.exit_code == 0, str(first)
    request = assert_fix_outputs(platform, first, "committed", attempt=1)

    red = platform.ci(FIX_BRANCH)
    assert platform.failed(red)
    answer(platform, "floor", "fix")
    second = platform.job(red)

    assert second.exit_code == 0, str(second)
    assert model_calls(platform) == 2
    retry = platform.api.message_requests[1]
    assert model.is_new_conversation(retry), "a new attempt, with a fresh prompt"
    text = model.first_user_text(retry)
    assert "test_average_of_several_ratings" in text, "what the fix branch's CI showed"
    assert "// max(len(ratings), 1)" in text, "what attempt 1 changed"
    assert_fix_outputs(platform, second, "committed", attempt=2)
    assert len(platform.requests_from(FIX_BRANCH)) == 1, "the same fix request, reused"
    assert platform.world.show(FIX_BRANCH, RATINGS) == version(platform, "fix")
    tip = platform.world.origin_tip(FIX_BRANCH)
    assert tip is not None and platform.world.trailers(tip).get("CI-Agent-Attempt") == ["2"]
    assert "attempt 2" in the_status_note(platform, request.number)["body"].lower()

    third = platform.job(platform.ci(FIX_BRANCH))

    assert third.exit_code == 0, str(third)
    assert_outputs(third, "fixed", attempt="", request=str(request.number))  # no attempt made
    assert platform.fix_request().draft is False
    assert model_calls(platform) == 2
    assert len(platform.created_notes(request.number)) == 1


def test_three_failures_escalate_once_and_a_fourth_run_asks_nobody(platform: Platform) -> None:
    said, last = fail_attempts(platform, 3)
    assert model_calls(platform) == 3
    # attempts 1 and 2 left the same tests failing: the third prompt and status note say so
    assert "no progress" in model.first_user_text(platform.api.message_requests[2]).lower()
    assert "no progress" in said[2].lower() and "no progress" not in said[1].lower()

    escalated = platform.job(last)

    assert escalated.exit_code == 3, str(escalated)
    assert model_calls(platform) == 3, "the budget is checked before any model call"
    request = platform.fix_request()
    assert_outputs(escalated, "escalated", branch=FIX_BRANCH, request=str(request.number))
    assert "ci-agent:escalated" in request.labels and "ci-agent" in request.labels
    # one escalation note besides the status note (which is edited, never re-posted)
    (escalation,) = [b for b in platform.created_notes(request.number) if parse_marker(b) is None]
    assert "escalat" in escalation.lower()
    for number, name in enumerate(WRONG_ORDER, 1):  # it says what each attempt changed
        assert f"attempt {number}" in escalation and WRONG_SUMMARIES[name] in escalation, name
    assert "test_no_ratings_yet" in escalation, "and what still fails (after the last attempt)"
    posted = len(platform.created_notes(request.number))

    retried = platform.retry(last)  # the same run's job again: GitHub's re-run, GitLab's retry

    assert retried.exit_code == 0, str(retried)
    assert_outputs(retried, "skipped")

    again = platform.job(platform.ci(FIX_BRANCH))  # a new CI run of the same commit, still red

    assert again.exit_code == 3, str(again)
    assert_outputs(again, "escalated")
    assert model_calls(platform) == 3, "a fourth attempt must not reach the model"
    assert len(platform.created_notes(request.number)) == posted, "escalation posted exactly once"
    assert len(platform.status_notes(request.number)) == 1
    assert platform.fix_request().labels.count("ci-agent:escalated") == 1


def test_the_fix_request_and_the_prompt_name_fetched_inputs_without_temp_paths(platform: Platform) -> None:
    answer(platform, "broken", "fix")
    red = platform.ci("main")

    run = platform.job(red)

    assert run.exit_code == 0, str(run)
    request = assert_fix_outputs(platform, run, "committed", attempt=1)
    prompt = model.first_user_text(platform.api.message_requests[0])
    (inputs_line,) = [line for line in prompt.splitlines() if line.startswith("inputs: ")]
    assert f"job log {red.job_id}-test.log (" in inputs_line, inputs_line
    for pattern in platform.inputs_line:
        assert re.search(pattern, inputs_line), (pattern, inputs_line)
    for text in (prompt, request.body, run.summary):
        assert not TEMP.search(text), TEMP.search(text)
        assert str(platform.world.tmp) not in text
    assert f"job log {red.job_id}-test.log" in request.body
    assert "no file matches" not in run.stderr and "no test-result file" not in run.stderr, run.stderr


def test_a_build_time_edit_is_labelled_and_called_out_at_the_top(platform: Platform) -> None:
    """A fix that edits code which runs at build time (a new `conftest.py`) passes the patch
    policy but is flagged: the label, and a callout naming the file before anything else."""
    red = platform.ci("main")
    patch = diff(version(platform, "broken"), version(platform, "fix")) + NEW_CONFTEST
    platform.api.reply(model.submit_patch(patch, summary=SUMMARY, root_cause=ROOT_CAUSE))

    run = platform.job(red)

    assert run.exit_code == 0, str(run)
    request = platform.fix_request()
    assert {"ci-agent", "ci-agent:build-change"} <= set(request.labels)
    callout = request.body.split("\n\n")[0]
    assert request.body.splitlines()[0].startswith("> ")
    assert "changes code that runs at build time" in callout and platform.request_word in callout
    assert f"`{CONFTEST}`" in callout and "pytest imports it" in callout
    body = request.body
    assert body.index("changes code that runs at build time") < body.index("ci-agent opened this")


def test_a_plain_fix_has_neither_label_nor_callout(platform: Platform) -> None:
    red = platform.ci("main")
    platform.api.reply(model.submit_patch(diff(version(platform, "broken"), version(platform, "fix")),
                                          summary=SUMMARY, root_cause=ROOT_CAUSE))

    run = platform.job(red)

    assert run.exit_code == 0, str(run)
    request = platform.fix_request()
    assert "ci-agent" in request.labels and "ci-agent:build-change" not in request.labels
    assert request.body.startswith("ci-agent opened this")


def test_a_rerun_of_the_same_job_does_not_count_twice(platform: Platform) -> None:
    """Attempt 2 is pushed by the job after run R; someone reruns that job. The rerun must not
    take R's failure for a new one: no model call, no push, and the next red run gives attempt 3
    (not an escalation)."""
    _, red = fail_attempts(platform, 1)
    answer(platform, "floor", "floor_float", summary=WRONG_SUMMARIES["floor_float"])
    second = platform.job(red)
    assert second.exit_code == 0, str(second)
    assert_fix_outputs(platform, second, "committed", attempt=2)
    tip = platform.world.origin_tip(FIX_BRANCH)

    rerun = platform.rerun_job(red)

    assert rerun.exit_code == 0, str(rerun)
    assert rerun.outcome == "skipped", str(rerun)
    assert model_calls(platform) == 2, "the rerun asks nobody: its failure was already answered"
    assert platform.world.origin_tip(FIX_BRANCH) == tip, "and pushes nothing"
    answer(platform, "floor_float", "fix")

    third = platform.job(platform.ci(FIX_BRANCH))

    assert third.exit_code == 0, str(third)
    assert_fix_outputs(platform, third, "committed", attempt=3)
    assert platform.world.show(FIX_BRANCH, RATINGS) == version(platform, "fix")
    request = platform.fix_request()
    assert "ci-agent:escalated" not in request.labels
    assert len(platform.status_notes(request.number)) == 1


def test_a_rerun_after_a_model_outage_counts_the_failure_once(platform: Platform) -> None:
    _, red = fail_attempts(platform, 1)
    platform.api.reply(Fault(401, "authentication_error", "invalid x-api-key"))

    died = platform.job(red)

    assert died.exit_code == ExitCode.EXTERNAL_SERVICE, str(died)
    assert died.outcome == "error", "the outputs say the job failed"
    assert "Traceback" not in died.stderr
    tip = platform.world.origin_tip(FIX_BRANCH)
    answer(platform, "floor", "fix")

    rerun = platform.rerun_job(red)

    assert rerun.exit_code == 0, str(rerun)
    assert_fix_outputs(platform, rerun, "committed", attempt=2)
    assert platform.world.origin_tip(FIX_BRANCH) != tip
    assert platform.world.show(FIX_BRANCH, RATINGS) == version(platform, "fix")
    assert model_calls(platform) == 3, "attempt 1, the refused call, attempt 2"
