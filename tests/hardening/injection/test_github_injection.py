"""Prompt injection against `ci-agent fix --github` (workflow_run job after a red CI run) that
only GitHub's scenarios carry: the model writes a secret into its prose or into the code, or
widens the configuration the `config` input names. The injections both forges share (an obedient
model, a slash command's instructions, prose aimed at our outputs) are test_forge_injection.py."""

from __future__ import annotations

import difflib
import secrets

from tests.github_scenarios.conftest import anthropic_fake, forge_waits, make_world, world
from tests.github_scenarios.harness import API_KEY, FIX_BRANCH, USER_TOKEN, World
from tests.github_scenarios.steps import RATINGS, diff, version
from tests.hardening.injection.checks import rejection_of, touched_anywhere
from tests.hardening.injection.payloads import fix_diff
from tests.scenarios import model_scripts as model
from tests.scenarios.harness import ROOT_CAUSE, SUMMARY
from tests.scenarios.sample_repos import git

__all__ = ["anthropic_fake", "forge_waits", "make_world", "world"]


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
