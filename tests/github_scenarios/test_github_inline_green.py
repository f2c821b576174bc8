"""The inline setup reports a fix branch's green job (issue 13, point 7).

pipelines/github/ci-agent-inline.yml used to run its step only `if: failure()`, so a green job on
the fix branch never reached ci-agent and the fix PR stayed a draft forever. The template's
condition now also admits a green job on a `ci-agent/fix/*` branch and passes `job_status:
${{ job.status }}`; the step takes `success` there as the fix's verdict. Both halves are tested
here: the template's condition, evaluated as GitHub would, and the step's behaviour.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from tests.github_scenarios.fake_site import pull_request_event, push_event
from tests.github_scenarios.gh_expr import evaluate_if
from tests.github_scenarios.harness import FIX_BRANCH, USER_TOKEN, World
from tests.github_scenarios.steps import answer, assert_outputs, model_calls, the_status_comment

INLINE = Path(__file__).resolve().parents[2] / "pipelines" / "github" / "ci-agent-inline.yml"
REPO, SHA = "octo/app", "3484a3fb816e0859fd6e1cea078d76385ff50625"


def _fix_step() -> dict[str, Any]:
    (job,) = yaml.safe_load(INLINE.read_text())["jobs"].values()
    (step,) = [s for s in job["steps"] if s.get("name") == "ci-agent fix"]
    assert isinstance(step, dict)
    return step


def _context(event_name: str, payload: dict[str, Any], ref_name: str, head_ref: str = "") -> dict[str, Any]:
    return {"github": {"event_name": event_name, "event": payload, "repository": REPO, "ref_name": ref_name,
                       "head_ref": head_ref}, "secrets": {}, "vars": {}, "inputs": {}}


def test_the_template_runs_the_step_on_a_fix_branchs_green_job_only() -> None:
    step = _fix_step()
    condition = step["if"]
    fix_pr = pull_request_event(REPO, 7, REPO, FIX_BRANCH, SHA, "main", SHA, "octocat")
    dispatched = {"ref": f"refs/heads/{FIX_BRANCH}", "inputs": {}}
    assert evaluate_if(condition, _context("pull_request", fix_pr, "7/merge", FIX_BRANCH), "success")
    assert evaluate_if(condition, _context("workflow_dispatch", dispatched, FIX_BRANCH), "success")
    assert evaluate_if(condition, _context("pull_request", fix_pr, "7/merge", FIX_BRANCH), "failure")
    # a green job anywhere else is none of ci-agent's business
    main = push_event(REPO, "main", "0" * 40, SHA, "octocat")
    assert not evaluate_if(condition, _context("push", main, "main"), "success")
    other = pull_request_event(REPO, 8, REPO, "ci-agent/other", SHA, "main", SHA, "octocat")
    assert not evaluate_if(condition, _context("pull_request", other, "8/merge", "ci-agent/other"), "success")
    assert step["with"]["job_status"] == "${{ job.status }}"


def test_a_green_inline_job_on_the_fix_branch_marks_the_fix_pr_ready(world: World) -> None:
    world.inputs["github_token"] = USER_TOKEN
    answer(world, "broken", "fix")
    first = world.inline("main", inputs={"job_status": "failure"})  # after the failed test step
    assert first.exit_code == 0 and first.outputs["outcome"] == "committed", str(first)
    pull = world.fix_pull()
    assert pull["draft"] is True
    tip = world.origin_tip(FIX_BRANCH)

    # the fix PR's own run: the build and tests pass, the template's condition lets the step run
    green = world.inline(FIX_BRANCH, event="pull_request", pr=pull["number"],
                         inputs={"job_status": "success"})

    assert green.exit_code == 0, str(green)
    assert_outputs(green, "fixed", branch=FIX_BRANCH, pr_number=str(pull["number"]))
    assert world.fix_pull()["draft"] is False, "ready for review"
    assert "green" in the_status_comment(world, pull["number"])["body"]
    assert model_calls(world) == 1 and world.origin_tip(FIX_BRANCH) == tip


def test_a_green_job_elsewhere_is_skipped_without_a_model_call(world: World) -> None:
    world.inputs["github_token"] = USER_TOKEN
    run = world.inline("main", build_log="4 passed in 0.01s\n", inputs={"job_status": "success"})
    assert run.exit_code == 0 and run.outputs["outcome"] == "skipped", str(run)
    assert "nothing to fix" in run.stdout
    assert model_calls(world) == 0 and world.github.pulls == {}
