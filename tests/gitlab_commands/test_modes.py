"""Modes propose and push on a same-project merge request: the patch proposed in the merge
request's status note, `/ci-agent apply` pushing exactly that patch onto the merge request's own
branch (an edited proposal is refused), and mode push hearing its attempt went green. (`/ci-agent
fix` in mode push, the same on both forges: tests/slash/scenarios/test_writers.py.)"""

from __future__ import annotations

from ci_agent.engine.texts import extract_proposal
from tests.gitlab_commands.harness import FEATURE, CommandWorld
from tests.gitlab_commands.steps import FEATURE_FIX, assert_acted, assert_dotenv
from tests.gitlab_scenarios.harness import JobRun, Pipeline
from tests.gitlab_scenarios.steps import RATINGS, answer, model_calls, version
from tests.scenarios.sample_repos import git


def proposed(world: CommandWorld) -> tuple[int, Pipeline, JobRun, str]:
    world.include["mode"] = "propose"
    iid, red = world.red_mr()
    answer(world, "broken", "fix")
    run = world.job(red)
    assert run.exit_code == 0, str(run)
    assert_dotenv(run, "proposed", mr_iid=str(iid))
    diff = extract_proposal(world.status_body(iid))
    assert diff is not None and "shop/ratings.py" in diff
    assert world.origin_tip(FEATURE) == red.sha and world.origin_tip(FEATURE_FIX) is None, "nothing pushed"
    return iid, red, run, diff


def test_apply_pushes_exactly_the_proposed_patch_onto_the_mr_branch(world: CommandWorld) -> None:
    iid, red, _, diff = proposed(world)
    note = world.say(iid, "/ci-agent apply")

    run = world.command(iid, note)

    assert run.exit_code == 0, str(run)
    assert_dotenv(run, "committed", branch=FEATURE)
    tip = world.origin_tip(FEATURE)
    assert tip is not None and world.commits(red.sha, FEATURE) == [tip], "one commit on the MR's branch"
    applied = git(world.repo.origin, "diff", "--no-color", "--no-ext-diff", red.sha, tip)
    assert applied == diff, "byte for byte the patch that was shown"
    assert world.show(FEATURE, RATINGS) == version(world, "fix")
    assert model_calls(world) == 1, "nothing regenerated"
    assert world.origin_tip(FEATURE_FIX) is None and list(world.gitlab.merge_requests) == [iid]
    assert "applied the proposed patch" in world.status_body(iid)
    assert_acted(world, note)


def test_an_edited_proposal_is_refused(world: CommandWorld) -> None:
    iid, red, _, diff = proposed(world)
    (status,) = [n for n in world.gitlab.notes[iid] if extract_proposal(n["body"]) == diff]
    added = [line for line in diff.splitlines() if line.startswith("+") and not line.startswith("+++")]
    edited = diff.replace(added[-1], added[-1] + "  # and one more thing", 1)
    status["body"] = status["body"].replace(diff, edited)  # someone with the rights edited the patch
    assert extract_proposal(status["body"]) == edited
    note = world.say(iid, "/ci-agent apply")

    run = world.command(iid, note)

    assert run.exit_code == 0, str(run)
    assert run.outcome == "refused", str(run)
    assert world.origin_tip(FEATURE) == red.sha, "nothing pushed"
    assert "not the one ci-agent posted" in world.status_body(iid)
    assert model_calls(world) == 1
    assert_acted(world, note)


def test_mode_push_hears_that_its_attempt_went_green(world: CommandWorld) -> None:
    world.include["mode"] = "push"
    iid, red = world.red_mr()
    answer(world, "broken", "fix")
    pushed = world.job(red)
    assert pushed.outcome == "committed", str(pushed)
    green = world.pipeline(FEATURE, source="merge_request_event", mr_iid=iid)
    assert green.status == "success"

    done = world.after(green)

    assert done is not None, "a ci-agent job runs after the attempt's pipeline"
    assert done.outcome == "fixed", str(done)
    assert "fixed" in world.status_body(iid)
