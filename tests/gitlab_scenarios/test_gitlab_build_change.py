"""A fix that edits build-time code (a new `conftest.py`) passes the policy but is flagged on
GitLab too: the fix MR carries `ci-agent:build-change` and its description starts with the
callout, read back from the GitLab fake."""

from __future__ import annotations

from tests.github_scenarios.harness import ROOT_CAUSE, SUMMARY
from tests.github_scenarios.test_github_build_change import CONFTEST, NEW_CONFTEST
from tests.gitlab_scenarios.harness import World
from tests.gitlab_scenarios.steps import diff, version
from tests.scenarios import model_scripts as model


def test_a_build_time_edit_is_labelled_and_called_out_on_the_merge_request(world: World) -> None:
    red = world.pipeline("main")
    world.api.reply(model.submit_patch(diff(version(world, "broken"), version(world, "fix")) + NEW_CONFTEST,
                                       summary=SUMMARY, root_cause=ROOT_CAUSE))

    job = world.job(red)

    assert job.exit_code == 0, str(job)
    mr = world.fix_mr()
    assert {"ci-agent", "ci-agent:build-change"} <= set(mr["labels"])
    callout = mr["description"].split("\n\n")[0]
    assert "changes code that runs at build time" in callout and "merge request" in callout
    assert f"`{CONFTEST}`" in callout
