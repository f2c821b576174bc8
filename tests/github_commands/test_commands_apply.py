"""Mode propose and `/ci-agent apply`: the fix workflow (input mode=propose) posts the patch in
the person's pull request's status comment and pushes nothing; `/ci-agent apply` pushes exactly
that patch onto the pull request's own branch — the pushed tree is the base plus the posted diff,
byte for byte, nothing regenerated — and refuses an edited proposal or a branch that moved."""

from __future__ import annotations

import re

import pytest

from tests.github_commands.harness import CommandWorld
from tests.github_commands.steps import FEATURE, assert_outputs, our_eyes, red_pr, status_body
from tests.github_scenarios.harness import ACTIONS_BOT, ROOT_CAUSE, SUMMARY
from tests.github_scenarios.steps import RATINGS, answer, diff, model_calls, version
from tests.scenarios import model_scripts as model
from tests.scenarios.sample_repos import git

PROPOSE = {"mode": "propose"}


def posted_diff(body: str) -> str:
    """The diff of the status comment's "Proposed patch" block, read as a person would copy it."""
    found = re.search(r"#### Proposed patch\n\n(`{3,})diff\n(.*?)\n\1\n", body, re.S)
    assert found, body
    return found.group(2) + "\n"


def proposed(world: CommandWorld) -> tuple[int, str, str]:
    """A red PR, then the fix workflow's run in mode propose: (PR, its head, the posted diff)."""
    number, ci = red_pr(world)
    answer(world, "broken", "fix")
    run = world.after_ci(ci, inputs=PROPOSE)
    assert_outputs(run, "proposed", branch=FEATURE)
    assert world.origin_branches() == [FEATURE, "main"], "nothing pushed"
    assert world.origin_tip(FEATURE) == ci.sha
    assert list(world.github.pulls) == [number]
    body = status_body(world, number)
    assert "/ci-agent apply" in body
    return number, ci.sha, posted_diff(body)


def tree_of(world: CommandWorld, base: str, diff: str) -> str:
    """The tree of `base` with `diff` applied by git itself (a person's `git apply`)."""
    clone = world.checkout(FEATURE, f"by-hand-{len(world.actions)}")
    git(clone, "checkout", "-q", "--detach", base)
    (clone.parent / "posted.diff").write_bytes(diff.encode())
    git(clone, "apply", "--index", str(clone.parent / "posted.diff"))
    return git(clone, "write-tree").strip()


@pytest.mark.parametrize("inputs", [PROPOSE, {}], ids=["command mode propose", "command template default"])
def test_apply_pushes_exactly_the_proposed_patch_onto_the_pr_branch(world: CommandWorld,
                                                                    inputs: dict[str, str]) -> None:
    number, base, diff = proposed(world)
    assert version(world, "broken") in world.show(FEATURE, RATINGS)
    comment = world.say(number, "/ci-agent apply")

    run = world.command(number, comment, inputs=inputs)

    assert run.exit_code == 0, str(run)
    assert_outputs(run, "committed", branch=FEATURE)
    assert model_calls(world) == 1, "applied as posted, never regenerated"
    (made,) = world.commits(base, FEATURE)
    assert git(world.repo.origin, "rev-parse", f"{made}^").strip() == base
    assert git(world.repo.origin, "rev-parse", f"{made}^{{tree}}").strip() == tree_of(world, base, diff)
    assert world.show(FEATURE, RATINGS) == version(world, "fix")
    assert world.origin_branches() == [FEATURE, "main"], "no fix branch"
    assert list(world.github.pulls) == [number], "no new pull request"
    assert our_eyes(world, comment) == [(comment, "eyes", ACTIONS_BOT)]
    assert "applied the proposed patch" in status_body(world, number)

    again = world.command(number, world.say(number, "/ci-agent apply"), inputs=inputs)

    assert_outputs(again, "nothing_to_do")
    assert world.commits(base, FEATURE) == [made], "a proposal is applied once"


def test_an_edited_proposal_is_refused_and_nothing_is_pushed(world: CommandWorld) -> None:
    number, base, _ = proposed(world)
    (ours,) = [c for c in world.comments_on(number) if c["user"] == ACTIONS_BOT]
    assert "+        return 0.0\n" in ours["body"]
    # someone with edit rights on the comment swaps one line of the patch
    swapped = "+        return __import__('os').getpid()\n"
    ours["body"] = ours["body"].replace("+        return 0.0\n", swapped)
    comment = world.say(number, "/ci-agent apply")

    run = world.command(number, comment, inputs=PROPOSE)

    assert run.exit_code == 0, str(run)
    assert_outputs(run, "refused")
    assert world.origin_tip(FEATURE) == base and world.commits(base, FEATURE) == []
    assert "not the one ci-agent posted" in status_body(world, number)
    assert model_calls(world) == 1


def test_apply_on_a_branch_that_moved_is_refused(world: CommandWorld) -> None:
    number, _, _ = proposed(world)
    pushed = world.human_commit(FEATURE)  # the author pushed after the proposal
    comment = world.say(number, "/ci-agent apply")

    run = world.command(number, comment, inputs=PROPOSE)

    assert_outputs(run, "refused")
    assert world.origin_tip(FEATURE) == pushed, "nothing pushed on top of the person's commit"
    said = status_body(world, number)
    assert "moved since the patch was proposed" in said


def test_apply_keeps_every_byte_tabs_trailing_spaces_non_ascii_and_no_final_newline(
        world: CommandWorld) -> None:
    number, ci = red_pr(world)
    target = version(world, "fix").replace("    if not ratings:\n", "    if not ratings:  # ça\t marche  \n")
    target = target.rstrip("\n")  # and the file loses its final newline
    assert target != version(world, "fix")
    patch = diff(version(world, "broken"), target) + "\n\\ No newline at end of file\n"
    world.api.reply(model.submit_patch(patch, summary=SUMMARY, root_cause=ROOT_CAUSE))
    assert world.after_ci(ci, inputs=PROPOSE).outputs["outcome"] == "proposed"
    posted = posted_diff(status_body(world, number))
    assert "# ça\t marche  \n" in posted and "\\ No newline at end of file" in posted

    run = world.command(number, world.say(number, "/ci-agent apply"), inputs=PROPOSE)

    assert_outputs(run, "committed", branch=FEATURE)
    (made,) = world.commits(ci.sha, FEATURE)
    assert git(world.repo.origin, "rev-parse", f"{made}^{{tree}}").strip() == tree_of(world, ci.sha, posted)
    assert git(world.repo.origin, "cat-file", "blob", f"{made}:{RATINGS}") == target
