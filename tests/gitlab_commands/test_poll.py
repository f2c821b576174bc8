"""The poller: the include's `ci-agent-poll` job in a pipeline schedule (CI_AGENT_POLL=true) finds
the unhandled command and creates its pipeline; a second poll creates none; with the relay also
running, two pipelines for one note still act once."""

from __future__ import annotations

from tests.gitlab_commands.harness import BOT, CommandWorld, RelayProcess, note_hook
from tests.gitlab_commands.steps import FEATURE_FIX, assert_acted
from tests.gitlab_scenarios.steps import answer, model_calls


def poller_is_maintainer(world: CommandWorld) -> None:
    """The poll job keeps its cursor in a CI/CD variable: its token needs the Maintainer role."""
    world.gitlab.add_user(BOT, 40, bot=True)


def test_a_scheduled_poll_starts_the_command_pipeline_once(world: CommandWorld) -> None:
    poller_is_maintainer(world)
    iid, _ = world.red_mr()
    note = world.say(iid, "/ci-agent fix")
    world.say(iid, "Looks like the ratings again.")
    answer(world, "broken", "fix")

    polled = world.job(world.schedule())

    assert polled.name == "ci-agent-poll", "the include's rules pick the poll job for the schedule"
    assert polled.exit_code == 0, str(polled)
    assert not any(polled.workspace.parent.glob(polled.workspace.name + "-empty/*")), "GIT_STRATEGY none"
    ((pipeline_id, variables),) = world.command_pipelines()
    assert variables == {"CI_AGENT_COMMAND_MR_IID": str(iid), "CI_AGENT_COMMAND_NOTE_ID": str(note)}
    assert world.gitlab.pipelines[pipeline_id]["ref"] == "main"
    assert "CI_AGENT_POLL_CURSOR" in world.gitlab.variables
    assert model_calls(world) == 0, "the poller never calls the model"

    run = world.job(world.api_pipeline(pipeline_id))

    assert run.name == "ci-agent-command" and run.outcome == "committed", str(run)
    assert_acted(world, note)

    again = world.job(world.schedule())

    assert again.exit_code == 0, str(again)
    assert len(world.command_pipelines()) == 1, "the second poll creates no pipeline"
    assert model_calls(world) == 1


def test_a_schedule_without_the_poll_variable_runs_no_ci_agent_job(world: CommandWorld) -> None:
    assert world.run_job(world.schedule({"NIGHTLY": "true"})) is None


def test_relay_and_poller_both_start_a_pipeline_and_one_acts(world: CommandWorld) -> None:
    poller_is_maintainer(world)
    iid, _ = world.red_mr()
    note = world.say(iid, "/ci-agent fix")
    answer(world, "broken", "fix")
    with RelayProcess(world.gitlab) as relay:
        assert relay.deliver(note_hook(world.gitlab, iid, note))[0] == 202
        from_relay = relay.started()
    world.job(world.schedule())  # the relay's pipeline has not run yet: the note is unclaimed
    (first, _), (second, _) = world.command_pipelines()
    assert first == from_relay

    acted = world.job(world.api_pipeline(first))
    tip = world.origin_tip(FEATURE_FIX)
    again = world.job(world.api_pipeline(second))

    assert acted.outcome == "committed", str(acted)
    assert again.exit_code == 0 and again.outcome == "skipped", str(again)
    assert model_calls(world) == 1 and world.origin_tip(FEATURE_FIX) == tip
    assert_acted(world, note)
