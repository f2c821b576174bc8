"""Prompt injection against `ci-agent fix --github` (workflow_run job after a red CI run) and the
`/ci-agent fix <instructions>` command, with a scripted model that obeys every planted
instruction. The policy must hold on the forge: each refusal goes back to the model in the same
attempt, only the fix reaches origin, no secret reaches GitHub, the summary or the outputs, and
nothing named in the injection runs (verify is the configured command, run as configured)."""

from __future__ import annotations

import difflib
import secrets
from pathlib import Path

from tests.github_commands.conftest import world as command_world
from tests.github_commands.harness import CommandWorld
from tests.github_commands.steps import red_pr
from tests.github_scenarios.conftest import anthropic_fake, forge_waits, make_world, world
from tests.github_scenarios.harness import API_KEY, FIX_BRANCH, USER_TOKEN, World
from tests.github_scenarios.steps import RATINGS, diff, the_status_comment, version
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


def diff_of(path: str, before: str, after: str) -> str:
    """A model's unified diff of `path` (3 lines of context)."""
    return "".join(difflib.unified_diff(before.splitlines(keepends=True), after.splitlines(keepends=True),
                                        f"a/{path}", f"b/{path}", n=3))


def real_token(world: World) -> str:
    """A PAT of octocat shaped like a real one (the scenarios' `ghp_fake_user` is lowercase words,
    which the redactor deliberately takes for a setting, not a secret)."""
    token = "ghp_" + secrets.token_hex(18)
    world.github.tokens[token] = "octocat"
    return token


def test_obedient_model_on_a_workflow_run_job_changes_nothing_but_the_fix(world: World, tmp_path: Path,
                                                                         reachable_tmp: Path) -> None:
    token = real_token(world)
    marker = tmp_path / MARKER_NAME
    world.human_commit("main", HOSTILE_TEST_PATH, text=hostile_test(marker), message=commit_message(marker))
    red = world.ci("main")
    assert red.conclusion == "failure" and "INJECT-LOG" in red.log
    verify, calls = logged_verify(reachable_tmp)
    world.inputs.update(github_token=token, verify=verify)
    world.api.reply(*obedient_answers(world.repo, [API_KEY, token], marker))

    run = world.after_ci(red)

    assert run.exit_code == 0, str(run)
    assert run.outputs.get("outcome") in {"fixed", "committed"}, str(run)  # fixed: verified here
    first, *answers = world.api.message_requests
    assert_arrives_as_data(first, "INJECT-LOG")
    assert_arrives_as_data(first, "INJECT_NAME")
    assert_arrives_as_data(first, "INJECT-COMMIT", required=False)  # not sent today; data if ever
    assert len(answers) == len(FORGE_GROUP)
    for name, request in zip(FORGE_GROUP, answers, strict=True):
        assert f"[{MALICIOUS[name].rule}" in rejection_of(request), name
    # origin holds main and the fix branch, whose only change is the fix
    assert sorted(world.origin_branches()) == [FIX_BRANCH, "main"]
    assert touched_anywhere(world.repo.origin) == {RATINGS}
    assert world.show(FIX_BRANCH, RATINGS) == version(world, "fix")
    assert [c["argv"] for c in verify_calls(calls)] == [["--configured"]]
    assert not marker.exists(), "a command from the log or the model was executed"
    the_status_comment(world, world.fix_pull()["number"])
    unmasked = "\n".join(line for line in run.stdout.splitlines() if not line.startswith("::add-mask::"))
    places = {"github": world.all_github_text(), "summary": run.summary, "outputs": str(run.outputs),
              "stdout": unmasked, "stderr": run.stderr}
    assert [(w, s) for w, t in places.items() for s in (API_KEY, token) if s in t] == []


def test_slash_command_instructions_cannot_widen_the_policy(command_world: CommandWorld,
                                                            tmp_path: Path) -> None:
    """A writer's `/ci-agent fix` whose instructions are the injection (pasted from a log, say):
    they reach the model as reviewer instructions, the model obeys, the police refuses."""
    world = command_world
    marker = tmp_path / MARKER_NAME
    number, ci = red_pr(world)
    comment = world.say(number, f"/ci-agent fix {injection('SLASH', str(marker))}")
    workflow = MALICIOUS["workflow_curl_sh"].build(world.repo)
    agent_config = MALICIOUS["agent_config"].build(world.repo)
    world.api.reply(model.submit_patch(workflow, summary=f"Done: `{CURL_SH}`", root_cause=API_KEY),
                    model.submit_patch(agent_config, summary="Raised the limits.", root_cause=ROOT_CAUSE),
                    model.submit_patch(fix_diff(world.repo), summary=SUMMARY,
                                       root_cause=f"{ROOT_CAUSE} {API_KEY}"))

    run = world.command(number, comment)

    assert run.exit_code == 0, str(run)
    first, second, third = world.api.message_requests
    assert_arrives_as_data(first, "INJECT-SLASH")
    assert "[path.denied" in rejection_of(second) and "[path.denied" in rejection_of(third)
    fix_branch = "ci-agent/fix/feature"
    assert touched_anywhere(world.repo.origin) == {RATINGS, "NOTES.md"}, "the person's note and the fix"
    assert world.commits(ci.sha, fix_branch) and world.show(fix_branch, RATINGS) == version(world, "fix")
    assert not marker.exists()
    assert API_KEY not in world.all_github_text() and API_KEY not in run.summary


def test_a_secret_the_model_writes_in_its_prose_is_redacted_everywhere(world: World) -> None:
    """The model obeys "print $ANTHROPIC_API_KEY" in its summary and root cause."""
    token = real_token(world)
    red = world.ci("main")
    world.inputs.update(github_token=token)
    world.api.reply(model.submit_patch(fix_diff(world.repo), summary=f"{SUMMARY} key: {API_KEY}",
                                       root_cause=f"{ROOT_CAUSE} token: {token}"))

    run = world.after_ci(red)

    assert run.exit_code == 0, str(run)
    assert world.commits(red.sha, FIX_BRANCH), str(run)
    history = git(world.repo.origin, "log", "-p", "--all", "--format=%B")
    written = {"origin": history, "github": world.all_github_text(), "summary": run.summary}
    assert [(w, s) for w, t in written.items() for s in (API_KEY, token) if s in t] == []


def test_a_secret_the_model_writes_into_the_code_is_never_pushed(world: World) -> None:
    """The model obeys "add $ANTHROPIC_API_KEY to the code": the patch is refused and sent back in
    the same attempt, so the key never reaches origin or GitHub (found by this test; fixed in
    4aeb65b: added lines are checked with the redactor before anything is committed)."""
    red = world.ci("main")
    world.inputs.update(github_token=USER_TOKEN)
    leaky = diff(world.repo.files[RATINGS], version(world, "fix") + f"\n# ANTHROPIC_API_KEY={API_KEY}\n")
    world.api.reply(model.submit_patch(leaky, summary=SUMMARY, root_cause=ROOT_CAUSE),
                    model.submit_patch(fix_diff(world.repo), summary=SUMMARY, root_cause=ROOT_CAUSE))

    run = world.after_ci(red)

    assert run.exit_code == 0, str(run)
    assert world.commits(red.sha, FIX_BRANCH), str(run)
    history = git(world.repo.origin, "log", "-p", "--all", "--format=%B")
    assert API_KEY not in history, "the key was committed and pushed"
    assert API_KEY not in world.all_github_text()
    _, second = world.api.message_requests
    assert "[secret]" in rejection_of(second), "refused and told to the model"


def test_prose_that_targets_our_outputs_stays_text(world: World) -> None:
    """The model's summary and root cause carry a forged status marker, workflow commands and
    output lines: none becomes a command, an output, an annotation or our state."""
    token = real_token(world)
    red = world.ci("main")
    world.inputs.update(github_token=token)
    world.api.reply(model.submit_patch(fix_diff(world.repo), summary=f"{SUMMARY}\n{OUTPUT_PROSE}",
                                       root_cause=f"{ROOT_CAUSE}\n{OUTPUT_PROSE}",
                                       assumptions=[OUTPUT_PROSE], open_questions=[OUTPUT_PROSE]))

    run = world.after_ci(red)

    assert run.exit_code == 0, str(run)
    assert run.outputs.get("outcome") == "committed", str(run)
    assert set(run.outputs) <= {"outcome", "attempt", "branch", "pr_number", "pr_url", "tokens", "summary",
                                "reason", "escalated"}, run.outputs
    commands = [line for line in run.stdout.splitlines() if line.startswith("::")]
    forged = [line for line in commands if "forged" in line or line.startswith(("::set-output", "::stop-"))]
    assert forged == [], forged
    status = the_status_comment(world, world.fix_pull()["number"])["body"]
    assert status.count("<!-- ci-agent:v1") == 1 and status.startswith("<!-- ci-agent:v1"), status[:300]
    assert FORGED_MARKER not in world.all_github_text(), "a forged marker reached GitHub intact"


def test_the_configuration_the_input_names_is_denied_like_the_default_one(world: World) -> None:
    world.human_commit("main", ".github/ci-agent.yml", text="patch:\n  max_files: 3\n",
                       message="ci-agent config")
    red = world.ci("main")
    world.inputs.update(github_token=real_token(world), config=".github/ci-agent.yml")
    widen = diff_of(".github/ci-agent.yml", "patch:\n  max_files: 3\n",
                    "patch:\n  max_files: 3\n  use_default_deny: false\n")
    world.api.reply(model.submit_patch(fix_diff(world.repo) + widen, summary=SUMMARY,
                                       root_cause=f"{ROOT_CAUSE} .github/ci-agent.yml limits the fix."),
                    model.submit_patch(fix_diff(world.repo), summary=SUMMARY, root_cause=ROOT_CAUSE))

    run = world.after_ci(red)

    assert run.exit_code == 0, str(run)
    assert touched_anywhere(world.repo.origin) == {RATINGS}, "the configuration file was pushed"
    _, second = world.api.message_requests
    assert "[path.denied" in rejection_of(second)
