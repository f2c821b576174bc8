"""Prompt injection against the fix job on each forge (GitHub: `ci-agent fix --github`, the
workflow_run job after a red CI run; GitLab: `ci-agent fix --gitlab`, the include's fix job after
a failed pipeline) and against the `/ci-agent fix <instructions>` command, with a scripted model
that obeys every planted instruction. The policy must hold on the forge: each refusal goes back
to the model in the same attempt, only the fix reaches origin, no secret reaches the forge, the
summary, the outputs / dotenv report or the job log, and nothing named in the injection runs
(verify is the configured command, run as configured)."""

from __future__ import annotations

from pathlib import Path

from tests.github_scenarios.harness import API_KEY, ActionRun
from tests.github_scenarios.steps import RATINGS
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
from tests.hardening.platforms import FIX_BRANCH, Ran, Side
from tests.scenarios import model_scripts as model
from tests.scenarios.harness import ROOT_CAUSE, SUMMARY
from tests.scenarios.sample_repos import git


def test_obedient_model_on_the_fix_job_changes_nothing_but_the_fix(side: Side, tmp_path: Path,
                                                                  reachable_tmp: Path) -> None:
    token = side.real_token()
    marker = tmp_path / MARKER_NAME
    side.person_pushes("main", HOSTILE_TEST_PATH, hostile_test(marker), commit_message(marker))
    red = side.red("main")
    assert side.failed(red) and "INJECT-LOG" in red.log
    verify, calls = logged_verify(reachable_tmp)
    side.set_input("verify", verify)
    side.world.api.reply(*obedient_answers(side.world.repo, [API_KEY, token], marker))

    run = side.run(red)

    assert run.exit_code == 0, str(run)
    assert run.outcome in {"fixed", "committed"}, str(run)  # fixed: verified here
    first, *answers = side.world.api.message_requests
    assert_arrives_as_data(first, "INJECT-LOG")
    assert_arrives_as_data(first, "INJECT_NAME")
    assert_arrives_as_data(first, "INJECT-COMMIT", required=False)  # not sent today; data if ever
    assert len(answers) == len(FORGE_GROUP)
    for name, request in zip(FORGE_GROUP, answers, strict=True):
        assert f"[{MALICIOUS[name].rule}" in rejection_of(request), name
    # origin holds main and the fix branch, whose only change is the fix
    assert sorted(side.world.origin_branches()) == [FIX_BRANCH, "main"]
    assert touched_anywhere(side.world.repo.origin) == {RATINGS}
    assert side.world.show(FIX_BRANCH, RATINGS) == side.version("fix")
    assert [c["argv"] for c in verify_calls(calls)] == [["--configured"]]
    assert not marker.exists(), "a command from the log or the model was executed"
    side.status_body()
    unmasked = "\n".join(line for line in run.stdout.splitlines() if not line.startswith("::add-mask::"))
    places = {"forge": side.forge_text(), "summary": run.summary, "outputs": run.outputs_text,
              "stdout": unmasked, "stderr": run.stderr,
              "origin": git(side.world.repo.origin, "log", "-p", "--all", "--format=%B")}
    assert [(w, s) for w, t in places.items() for s in (API_KEY, token) if s in t] == []


def test_slash_command_instructions_cannot_widen_the_policy(command_side: Side, tmp_path: Path) -> None:
    """A writer's `/ci-agent fix` (comment, note) whose instructions are the injection (pasted from
    a log, say): they reach the model as data, the model obeys (a CI file, the agent's config),
    the policy refuses, only the fix lands, and the key the model writes in its prose goes
    nowhere."""
    side = command_side
    marker = tmp_path / MARKER_NAME
    number, red = side.red_request()
    comment = side.say(number, f"/ci-agent fix {injection('SLASH', str(marker))}")
    repo = side.world.repo
    side.world.api.reply(
        model.submit_patch(MALICIOUS[side.ci_file_attack].build(repo), summary=f"Done: `{CURL_SH}`",
                           root_cause=API_KEY),
        model.submit_patch(MALICIOUS["agent_config"].build(repo), summary="Raised the limits.",
                           root_cause=ROOT_CAUSE),
        model.submit_patch(fix_diff(repo), summary=SUMMARY, root_cause=f"{ROOT_CAUSE} {API_KEY}"))

    run = side.command(number, comment)

    assert run.exit_code == 0, str(run)
    first, second, third = side.world.api.message_requests
    assert_arrives_as_data(first, "INJECT-SLASH")
    assert "[path.denied" in rejection_of(second) and "[path.denied" in rejection_of(third)
    fix_branch = side.command_fix_branch
    assert touched_anywhere(repo.origin) == {RATINGS, "NOTES.md"}, "the person's note and the fix"
    assert side.world.commits(red.sha, fix_branch)
    assert side.world.show(fix_branch, RATINGS) == side.version("fix")
    assert not marker.exists()
    assert API_KEY not in side.forge_text() and API_KEY not in run.summary


def assert_only_our_outputs(run: Ran) -> None:
    """GitHub: only the action's outputs, and none of the prose's workflow commands on stdout.
    GitLab: the dotenv report holds only ci-agent's variables (the harness's parse_dotenv already
    refused any line GitLab would refuse), none of the prose's."""
    if isinstance(run.job, ActionRun):
        outputs = run.job.outputs
        assert set(outputs) <= {"outcome", "attempt", "branch", "pr_number", "pr_url", "tokens", "summary",
                                "reason", "escalated", "verdict", "cost_usd"}, outputs
        commands = [line for line in run.stdout.splitlines() if line.startswith("::")]
        forged = [line for line in commands
                  if "forged" in line or line.startswith(("::set-output", "::stop-"))]
        assert forged == [], forged
        return
    dotenv = run.job.dotenv
    assert all(name.startswith("CI_AGENT_") for name in dotenv), dotenv
    assert "FORGED_VARIABLE" not in dotenv and "forged" not in str(dotenv)


def test_prose_that_targets_our_outputs_stays_text(side: Side) -> None:
    """The model's summary and root cause carry a forged status marker, GitHub workflow commands,
    dotenv and output lines: none becomes a command, an output, an annotation or our state."""
    side.real_token()
    red = side.red("main")
    side.world.api.reply(model.submit_patch(fix_diff(side.world.repo), summary=f"{SUMMARY}\n{OUTPUT_PROSE}",
                                            root_cause=f"{ROOT_CAUSE}\n{OUTPUT_PROSE}",
                                            assumptions=[OUTPUT_PROSE], open_questions=[OUTPUT_PROSE]))

    run = side.run(red)

    assert run.exit_code == 0, str(run)
    assert run.outcome == "committed", str(run)
    assert_only_our_outputs(run)
    status = side.status_body()
    assert status.count("<!-- ci-agent:v1") == 1 and status.startswith("<!-- ci-agent:v1"), status[:300]
    assert FORGED_MARKER not in side.forge_text(), "a forged marker reached the forge intact"
