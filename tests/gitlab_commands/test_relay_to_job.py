"""End to end on GitLab: a Developer's `/ci-agent fix` note → the webhook (a real `ci-agent serve`
over HTTP) → the pipeline it creates → the include's `ci-agent-command` job in that pipeline → an
attempt on the fix branch, 👀 on the note, the answer in the status note. Redeliveries, edits and
our own status notes start nothing."""

from __future__ import annotations

from tests.gitlab_commands.harness import BOT, FEATURE, CommandWorld, RelayProcess, note_hook
from tests.gitlab_commands.steps import FEATURE_FIX, assert_acted
from tests.gitlab_scenarios.steps import RATINGS, answer, model_calls, version


def test_a_note_goes_through_the_relay_to_the_command_job_and_an_attempt(world: CommandWorld) -> None:
    iid, red = world.red_mr()
    note = world.say(iid, "/ci-agent fix")
    answer(world, "broken", "fix")

    with RelayProcess(world.gitlab) as relay:
        status, body = relay.deliver(note_hook(world.gitlab, iid, note))
        assert (status, body) == (202, {"accepted": note})
        pipeline_id = relay.started()

    (created,) = world.gitlab.created_pipelines
    assert created["ref"] == "main", "the default branch, never the merge request's code"
    assert world.gitlab.pipeline_variables[pipeline_id] == {"CI_AGENT_COMMAND_MR_IID": str(iid),
                                                            "CI_AGENT_COMMAND_NOTE_ID": str(note)}
    pipeline = world.api_pipeline(pipeline_id)
    assert pipeline.source == "api"

    run = world.job(pipeline)

    assert run.name == "ci-agent-command", "the include's rules pick the command job for this pipeline"
    assert run.exit_code == 0, str(run)
    assert run.outcome == "committed", str(run)
    assert model_calls(world) == 1
    assert world.show(FEATURE_FIX, RATINGS) == version(world, "fix")
    assert world.origin_tip(FEATURE) == red.sha, "the person's branch is untouched in mode pr"
    (fix_mr,) = world.mrs_from(FEATURE_FIX)
    assert fix_mr["target_branch"] == FEATURE
    assert_acted(world, note)
    said = world.status_body(iid)
    assert "attempt 1 pushed" in said and FEATURE_FIX in said


def test_a_redelivered_note_creates_one_pipeline(world: CommandWorld) -> None:
    iid, _ = world.red_mr()
    note = world.say(iid, "/ci-agent status")
    hook = note_hook(world.gitlab, iid, note)

    with RelayProcess(world.gitlab) as relay:
        assert relay.deliver(hook)[0] == 202
        assert relay.deliver(hook) == (200, {"ignored": "duplicate"})
        relay.started()

    assert len(world.command_pipelines()) == 1


def test_an_edited_note_and_a_wrong_token_start_nothing(world: CommandWorld) -> None:
    iid, _ = world.red_mr()
    note = world.say(iid, "/ci-agent fix")

    with RelayProcess(world.gitlab) as relay:
        edited = relay.deliver(note_hook(world.gitlab, iid, note, action="update"))
        wrong = relay.deliver(note_hook(world.gitlab, iid, note), token="not-the-secret-000000000")

    assert edited == (200, {"ignored": "an edited comment never runs a command"})
    assert wrong[0] == 401
    assert world.command_pipelines() == []


def test_our_status_note_quoting_a_command_triggers_nothing(world: CommandWorld) -> None:
    """Our status note (here the help answer, which lists `/ci-agent fix`) and a person's reply
    quoting a command reach the relay like any note: neither starts a pipeline, and a command job
    made for our own note (a poller that got it wrong) does nothing either: no loop."""
    iid = world.feature_mr()
    asked = world.say(iid, "/ci-agent help")
    assert world.command(iid, asked).exit_code == 0
    (ours,) = [n for n in world.notes_on(iid) if n["author"]["username"] == BOT]
    assert "/ci-agent fix" in ours["body"]
    quoting = world.say(iid, "> /ci-agent fix\n\nWhat would this do?\n\n```\n/ci-agent fix\n```")
    before = len(world.command_pipelines())

    with RelayProcess(world.gitlab) as relay:
        answers = [relay.deliver(note_hook(world.gitlab, iid, n)) for n in (ours["id"], quoting)]

    assert answers == [(200, {"ignored": "a bot's comment"}), (200, {"ignored": "no command"})]
    assert len(world.command_pipelines()) == before
    before_notes = [dict(n) for n in world.notes_on(iid)]
    run = world.command(iid, ours["id"])
    assert run.exit_code == 0 and run.outcome == "skipped", str(run)
    assert world.our_eyes(ours["id"]) == [] and model_calls(world) == 0
    assert world.notes_on(iid) == before_notes, "no note written or edited"
