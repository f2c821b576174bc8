"""Configuration from the trusted side (issue 12), on GitHub and GitLab: in CI `.ci-agent.yml` is
read from the default branch as origin has it, never from the failing branch or the head of a
pull / merge request.

A contributor's branch that widens the policy (`use_default_deny: false`, so a workflow file may
be written), raises the limits, sets a verify command and plants prompt notes with an injection
has no effect on the run made for its failure; the status note says in one line that the change
takes effect after merge. The default branch's own configuration does apply (its notes reach the
model), so the file is really read, from the right place.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.platform_scenarios.base import ROOT_CAUSE, SUMMARY, push_file
from tests.platform_scenarios.configs import (
    CHANGED,
    MAIN_NOTE,
    PR_NOTE,
    hostile_config,
    system_text,
    workflow_plus_fix,
)
from tests.platform_scenarios.platforms import Platform, Run, the_status_note
from tests.platform_scenarios.steps import RATINGS, diff, model_calls, version
from tests.scenarios import model_scripts as model
from tests.scenarios.sample_repos import git

FEATURE = "feature/stars"
FEATURE_FIX = "ci-agent/fix/feature/stars"


def run_on_a_hostile_branch(platform: Platform, canary: Path) -> tuple[Run, int]:
    """A person's request from a branch whose `.ci-agent.yml` is hostile, its CI red; the model
    answers with the fix plus a workflow file (denied unless the policy was widened), then with
    the fix alone. Returns the red run and the person's request."""
    push_file(platform.repo, FEATURE, ".ci-agent.yml", hostile_config(canary), new_branch=True)
    source = platform.open_person_request(FEATURE)
    red = platform.request_ci(FEATURE, source)
    fix = diff(version(platform, "broken"), version(platform, "fix"))
    platform.api.reply(model.submit_patch(fix + workflow_plus_fix(), summary=SUMMARY, root_cause=ROOT_CAUSE),
                       model.submit_patch(fix, summary=SUMMARY, root_cause=ROOT_CAUSE))
    return red, source


def test_a_branchs_config_has_no_effect_until_merged(platform: Platform, tmp_path: Path) -> None:
    canary = tmp_path / "verify-ran"
    push_file(platform.repo, "main", ".ci-agent.yml", f"notes:\n  - \"{MAIN_NOTE}\"\n")
    red, source = run_on_a_hostile_branch(platform, canary)

    run = platform.job(red)

    assert run.exit_code == 0, str(run)
    assert model_calls(platform) == 2, "the workflow edit was rejected and sent back"
    first, second = platform.api.message_requests
    assert "[path.denied" in json.dumps(second["messages"][-1])
    assert MAIN_NOTE in json.dumps(first["system"]), "the default branch's notes are the ones used"
    assert PR_NOTE not in system_text(platform), "the branch's notes never become instructions"
    (request,) = platform.requests_from(FEATURE_FIX)
    files = git(platform.repo.origin, "diff", "--name-only", f"{red.sha}..refs/heads/{FEATURE_FIX}")
    assert files.split() == [RATINGS], "only the fix was pushed"
    assert not canary.exists(), "the branch's verify command never ran"
    for number in (request.number, source):
        body = the_status_note(platform, number)["body"]
        assert body.count(CHANGED) == 1, body
        assert "uses the copy on the default branch `main`" in body


def test_a_config_only_the_branch_has_leaves_the_defaults(platform: Platform, tmp_path: Path) -> None:
    """The default branch has no `.ci-agent.yml`: the defaults apply, even though the branch adds one."""
    canary = tmp_path / "verify-ran"
    red, source = run_on_a_hostile_branch(platform, canary)

    run = platform.job(red)

    assert run.exit_code == 0, str(run)
    assert model_calls(platform) == 2 and PR_NOTE not in system_text(platform)
    body = the_status_note(platform, source)["body"]
    assert CHANGED in body and "this run uses the defaults (`main` has none)" in body
    assert not canary.exists()
