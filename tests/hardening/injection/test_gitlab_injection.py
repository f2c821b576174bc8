"""Prompt injection against `ci-agent fix --gitlab` (the include's fix job after a failed
pipeline), with a scripted model that obeys every planted instruction: each refusal goes back to
the model in the same attempt, only the fix reaches origin, no secret reaches GitLab, the dotenv
report or the job log, and nothing named in the injection runs."""

from __future__ import annotations

import secrets
from pathlib import Path

from tests.gitlab_commands.conftest import world as command_world
from tests.gitlab_commands.harness import CommandWorld
from tests.gitlab_commands.steps import FEATURE_FIX
from tests.gitlab_scenarios.conftest import anthropic_fake, forge_waits, make_world, world
from tests.gitlab_scenarios.harness import API_KEY, BOT, FIX_BRANCH, World
from tests.gitlab_scenarios.steps import RATINGS, the_status_note, version
from tests.hardening.injection.checks import (
    assert_arrives_as_data,
    logged_verify,
    rejection_of,
    touched_anywhere,
    verify_calls,
)
from tests.hardening.injection.forge_plants import (
    FORGE_GROUP,
    FORGED_MARKER,
    HOSTILE_TEST_PATH,
    OUTPUT_PROSE,
    commit_message,
    hostile_test,
    obedient_answers,
)
from tests.hardening.injection.payloads import CURL_SH, MALICIOUS, MARKER_NAME, fix_diff, injection
from tests.scenarios import model_scripts as model
from tests.scenarios.harness import ROOT_CAUSE, SUMMARY
from tests.scenarios.sample_repos import git

__all__ = ["anthropic_fake", "command_world", "forge_waits", "make_world", "world"]


def push_hostile_commit(world: World, marker: Path) -> None:
    """A person pushes the failing test carrying the injection to main."""
    clone = world.clone("main", "person")
    (clone / HOSTILE_TEST_PATH).write_text(hostile_test(marker))
    git(clone, "add", HOSTILE_TEST_PATH)
    git(clone, "commit", "-q", "-m", commit_message(marker))
    git(clone, "push", "-q", "origin", "HEAD:refs/heads/main")


def test_obedient_model_on_a_fix_job_changes_nothing_but_the_fix(world: World, tmp_path: Path,
                                                                 reachable_tmp: Path) -> None:
    token = "glpat-" + secrets.token_hex(12)  # shaped like a real one (`glpat-bot` reads as a word)
    world.gitlab.add_token(token, BOT, "project")
    world.variables["CI_AGENT_GITLAB_TOKEN"] = token
    marker = tmp_path / MARKER_NAME
    push_hostile_commit(world, marker)
    red = world.pipeline("main")
    assert red.status == "failed" and "INJECT-LOG" in red.log
    verify, calls = logged_verify(reachable_tmp)
    world.include["verify"] = verify
    world.api.reply(*obedient_answers(world.repo, [API_KEY, token], marker))

    run = world.job(red)

    assert run.exit_code == 0, str(run)
    assert run.outcome in {"fixed", "committed"}, str(run)
    first, *answers = world.api.message_requests
    assert_arrives_as_data(first, "INJECT-LOG")
    assert_arrives_as_data(first, "INJECT_NAME")
    assert_arrives_as_data(first, "INJECT-COMMIT", required=False)  # not sent today; data if ever
    assert len(answers) == len(FORGE_GROUP)
    for name, request in zip(FORGE_GROUP, answers, strict=True):
        assert f"[{MALICIOUS[name].rule}" in rejection_of(request), name
    assert sorted(world.origin_branches()) == [FIX_BRANCH, "main"]
    assert touched_anywhere(world.repo.origin) == {RATINGS}
    assert world.show(FIX_BRANCH, RATINGS) == version(world, "fix")
    assert [c["argv"] for c in verify_calls(calls)] == [["--configured"]]
    assert not marker.exists(), "a command from the log or the model was executed"
    the_status_note(world, world.fix_mr()["iid"])
    sent = "\n".join(str(r.body) for r in world.gitlab.requests if r.body)
    held = str(world.gitlab.merge_requests) + str(world.gitlab.notes)
    places = {"gitlab requests": sent, "gitlab state": held, "dotenv": str(run.dotenv),
              "summary": run.summary, "stdout": run.stdout, "stderr": run.stderr,
              "origin": git(world.repo.origin, "log", "-p", "--all", "--format=%B")}
    assert [(w, s) for w, t in places.items() for s in (API_KEY, token) if s in t] == []


def test_a_command_notes_instructions_cannot_widen_the_policy(command_world: CommandWorld,
                                                            tmp_path: Path) -> None:
    """A Developer's `/ci-agent fix` note whose instructions are the injection: they reach the
    model as data, the model obeys, the police refuses, only the fix lands."""
    world = command_world
    marker = tmp_path / MARKER_NAME
    iid, red = world.red_mr()
    note = world.say(iid, f"/ci-agent fix {injection('SLASH', str(marker))}")
    world.api.reply(
        model.submit_patch(MALICIOUS["gitlab_ci"].build(world.repo), summary=f"Done: `{CURL_SH}`",
                           root_cause=ROOT_CAUSE),
        model.submit_patch(MALICIOUS["agent_config"].build(world.repo), summary="Raised the limits.",
                           root_cause=ROOT_CAUSE),
        model.submit_patch(fix_diff(world.repo), summary=SUMMARY, root_cause=ROOT_CAUSE))

    run = world.command(iid, note)

    assert run.exit_code == 0, str(run)
    first, second, third = world.api.message_requests
    assert_arrives_as_data(first, "INJECT-SLASH")
    assert "[path.denied" in rejection_of(second) and "[path.denied" in rejection_of(third)
    assert touched_anywhere(world.repo.origin) == {RATINGS, "NOTES.md"}, "the person's note and the fix"
    assert world.commits(red.sha, FEATURE_FIX) and world.show(FEATURE_FIX, RATINGS) == version(world, "fix")
    assert not marker.exists()


def test_prose_that_targets_our_outputs_stays_text(world: World) -> None:
    """The model's prose carries a forged status marker and dotenv lines: the dotenv report holds
    only ci-agent's variables, with the true outcome, and our note's marker is ours alone."""
    red = world.pipeline("main")
    world.api.reply(model.submit_patch(fix_diff(world.repo), summary=f"{SUMMARY}\n{OUTPUT_PROSE}",
                                       root_cause=f"{ROOT_CAUSE}\n{OUTPUT_PROSE}",
                                       assumptions=[OUTPUT_PROSE], open_questions=[OUTPUT_PROSE]))

    run = world.job(red)

    assert run.exit_code == 0, str(run)
    assert run.outcome == "committed", str(run)  # parse_dotenv refused any line GitLab would refuse
    assert all(name.startswith("CI_AGENT_") for name in run.dotenv), run.dotenv
    assert "FORGED_VARIABLE" not in run.dotenv and "forged" not in str(run.dotenv)
    note = the_status_note(world, world.fix_mr()["iid"])["body"]
    assert note.count("<!-- ci-agent:v1") == 1 and note.startswith("<!-- ci-agent:v1"), note[:300]
    held = str(world.gitlab.merge_requests) + str(world.gitlab.notes)
    assert FORGED_MARKER not in held, "a forged marker reached GitLab intact"
