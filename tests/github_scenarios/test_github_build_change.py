"""A fix that edits code which runs at build time (here a new `conftest.py`) is flagged, also when
the job could not open its PR and the rerun does it from the pushed commit. (The label and the
callout on a plain run, the same on GitLab: tests/platform_scenarios/test_fix_cycle.py.)"""

from __future__ import annotations

from tests.fakes.github_fake import forbidden
from tests.github_scenarios.harness import ROOT_CAUSE, SUMMARY, USER_TOKEN, World, refuse_rewinds
from tests.github_scenarios.steps import diff, version
from tests.platform_scenarios.steps import CONFTEST, NEW_CONFTEST
from tests.scenarios import model_scripts as model


def test_an_orphaned_build_time_attempt_keeps_its_flag_when_the_rerun_opens_its_pr(world: World) -> None:
    """The job pushed the attempt but could not open the PR nor take the push back; the rerun
    opens the PR from the pushed commit, and reads the build-time edit back from it."""
    refuse_rewinds(world)
    world.inputs["github_token"] = USER_TOKEN
    world.github.inject(forbidden("pull_requests=write"), path=r"/pulls$", method="POST", times=1)
    world.api.reply(model.submit_patch(diff(version(world, "broken"), version(world, "fix")) + NEW_CONFTEST,
                                       summary=SUMMARY, root_cause=ROOT_CAUSE))
    red = world.ci("main")
    assert world.after_ci(red, run_id=8080).exit_code != 0

    rerun = world.after_ci(red, run_id=8080, run_attempt=2)

    assert rerun.exit_code == 0, str(rerun)
    pull = world.fix_pull()
    assert "ci-agent:build-change" in pull["labels"]
    assert f"`{CONFTEST}`" in (pull["body"] or "").split("\n\n")[0]
