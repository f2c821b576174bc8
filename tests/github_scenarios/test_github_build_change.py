"""A fix that edits code which runs at build time (here a new `conftest.py`) passes the patch
policy but is flagged: the fix PR carries the `ci-agent:build-change` label and starts with a
callout naming the file, read back from the GitHub fake as a reviewer would see it."""

from __future__ import annotations

from tests.fakes.github_fake import forbidden
from tests.github_scenarios.harness import ROOT_CAUSE, SUMMARY, USER_TOKEN, World, refuse_rewinds
from tests.github_scenarios.steps import diff, version
from tests.scenarios import model_scripts as model

CONFTEST = "tests/conftest.py"
NEW_CONFTEST = ("--- /dev/null\n+++ b/tests/conftest.py\n@@ -0,0 +1,6 @@\n+import pytest\n+\n+\n"
                "+@pytest.fixture\n+def no_ratings():\n+    return []\n")


def test_a_build_time_edit_is_labelled_and_called_out_at_the_top(world: World) -> None:
    world.inputs["github_token"] = USER_TOKEN
    red = world.ci("main")
    world.api.reply(model.submit_patch(diff(version(world, "broken"), version(world, "fix")) + NEW_CONFTEST,
                                       summary=SUMMARY, root_cause=ROOT_CAUSE))

    run = world.after_ci(red)

    assert run.exit_code == 0, str(run)
    pull = world.fix_pull()
    assert {"ci-agent", "ci-agent:build-change"} <= set(pull["labels"])
    body = pull["body"] or ""
    first_line = body.splitlines()[0]
    assert first_line.startswith("> ") and "changes code that runs at build time" in body.split("\n\n")[0]
    callout = body.split("\n\n")[0]
    assert f"`{CONFTEST}`" in callout and "pytest imports it" in callout
    assert body.index("changes code that runs at build time") < body.index("ci-agent opened this")


def test_a_plain_fix_has_neither_label_nor_callout(world: World) -> None:
    world.inputs["github_token"] = USER_TOKEN
    red = world.ci("main")
    world.api.reply(model.submit_patch(diff(version(world, "broken"), version(world, "fix")),
                                       summary=SUMMARY, root_cause=ROOT_CAUSE))

    run = world.after_ci(red)

    assert run.exit_code == 0, str(run)
    pull = world.fix_pull()
    assert "ci-agent" in pull["labels"] and "ci-agent:build-change" not in pull["labels"]
    assert (pull["body"] or "").startswith("ci-agent opened this")


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
