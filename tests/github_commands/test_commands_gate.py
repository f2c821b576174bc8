"""Who and what never runs a command (issue 7's gate, decided in code before any model call):
a read-only collaborator, an outside contributor, a bot, ci-agent's own account; two jobs racing
on one comment run it once; edits, quotes and our own status comments never run. A comment
delivered twice and the hourly limit, the same on both forges: tests/slash/scenarios/test_gate.py."""

from __future__ import annotations

import threading
from dataclasses import dataclass

import pytest

from tests.github_commands.harness import CommandSite, CommandWorld, start_command, workflow_starts
from tests.github_commands.steps import (
    FEATURE,
    FEATURE_FIX,
    assert_ignored,
    assert_outputs,
    our_eyes,
    red_pr,
)
from tests.github_scenarios.harness import ACTIONS_BOT, USER_TOKEN
from tests.github_scenarios.steps import answer, model_calls


@dataclass(frozen=True)
class Author:
    login: str
    association: str
    role: str | None  # the collaborator role the permission API answers; None: not a collaborator
    bot: bool = False
    token: str = ""  # the command job's github_token ("" = the workflow's default)


AUTHORS = {
    "read-only collaborator": Author("reader", "COLLABORATOR", "read"),
    "outside contributor (NONE)": Author("passerby", "NONE", None),
    "first-time contributor": Author("newcomer", "FIRST_TIME_CONTRIBUTOR", None),
    # GitHub answers `read` for any account on a public repository it does not list as collaborator
    "contributor without permission": Author("contrib", "CONTRIBUTOR", "read"),
    "triage role": Author("triager", "MEMBER", "triage"),
    # a bot holding write access through its app: still a bot
    "bot with write access": Author("renovate[bot]", "CONTRIBUTOR", "write", bot=True),
    # our own account, which is an admin here (a PAT of octocat as github_token)
    "ci-agent's own account": Author("octocat", "OWNER", "admin", token=USER_TOKEN),
}


# Every author on the conversation; two of them on a line of the diff too (a review comment).
CASES = [(who, False) for who in AUTHORS]
CASES += [("read-only collaborator", True), ("bot with write access", True)]


@pytest.mark.parametrize(("who", "review"), CASES,
                         ids=[f"{who}, {'review' if review else 'issue'} comment" for who, review in CASES])
def test_a_command_by_someone_without_write_access_is_ignored(world: CommandWorld, who: str,
                                                             review: bool) -> None:
    author = AUTHORS[who]
    if author.role is not None:
        world.github.collaborators[author.login] = author.role
    number = world.open_pr()  # no CI run needed: nothing may get as far as reading one
    answer(world, "broken", "fix")
    comment = world.say(number, "/ci-agent fix please", author.login, association=author.association,
                        bot=author.bot, review=review)
    since = len(world.github.requests)

    run = world.command(number, comment, review=review,
                        inputs={"github_token": author.token} if author.token else None)

    assert run.exit_code == 0, str(run)
    assert run.outputs["outcome"] in ("refused", "skipped"), str(run)
    assert_ignored(world, since, 0, [FEATURE, "main"], comment, review)
    asked = world.github.requests_to("GET", rf"/repos/octo/app/collaborators/{author.login}/permission")
    if author.association in ("NONE", "FIRST_TIME_CONTRIBUTOR") or author.bot or author.token:
        assert asked == [], "refused or ignored before asking GitHub for the permission"


def test_the_workflow_filter_leaves_bots_out_and_lets_writers_in(world: CommandWorld) -> None:
    """The template's `if:` is a pre-filter only (the code decides, above); it still keeps bot
    comments from starting a job at all."""
    number = world.open_pr()
    writer = world.say(number, "/ci-agent help")
    bot = world.say(number, "/ci-agent help", "dependabot[bot]", association="NONE", bot=True)
    world.command(number, writer)
    assert workflow_starts(*world.last_event)
    world.command(number, bot)
    assert not workflow_starts(*world.last_event)


def test_two_jobs_for_one_comment_at_the_same_time_run_it_once(world: CommandWorld) -> None:
    """Both jobs read the marker before either wrote it; GitHub's 201-vs-200 on the 👀 decides."""
    number, ci = red_pr(world)
    answer(world, "broken", "fix")
    comment = world.say(number, "/ci-agent fix")
    assert isinstance(world.github, CommandSite)
    world.github.claim_barrier = threading.Barrier(2, timeout=60)  # both reach the claim together
    jobs = [start_command(world.command_job(number, comment)) for _ in range(2)]

    runs = sorted((job.wait() for job in jobs), key=lambda r: r.outputs.get("outcome", ""))

    assert [r.outputs.get("outcome") for r in runs] == ["committed", "skipped"], "\n\n".join(map(str, runs))
    assert model_calls(world) == 1
    assert len(world.commits(ci.sha, FEATURE_FIX)) == 1
    assert our_eyes(world, comment) == [(comment, "eyes", ACTIONS_BOT)]
    assert len(world.github.requests_to("POST", rf"/repos/octo/app/issues/comments/{comment}/reactions")) == 2


def test_a_comment_another_job_already_claimed_is_not_run(world: CommandWorld) -> None:
    """Two jobs racing on one comment: the one whose 👀 GitHub answers 200 (already there) stops,
    even before the winner wrote the comment down in the marker."""
    number, _ = red_pr(world)
    answer(world, "broken", "fix")
    comment = world.say(number, "/ci-agent fix")
    world.github.reactions.append((comment, "eyes", ACTIONS_BOT))  # the other job's claim

    run = world.command(number, comment)

    assert_outputs(run, "skipped")
    assert "already claimed" in run.stdout
    assert model_calls(world) == 0 and world.origin_branches() == [FEATURE, "main"]
    assert world.comments_on(number) == [world.github.comments[comment]], "no answer posted"


def test_an_edited_comment_never_runs(world: CommandWorld) -> None:
    number = world.open_pr()
    comment = world.say(number, "Looks red.")
    world.github.comments[comment]["body"] = "Looks red.\n/ci-agent fix"  # the writer edits it in
    since = len(world.github.requests)

    run = world.command(number, comment, action="edited")

    assert_outputs(run, "skipped")
    assert_ignored(world, since, 0, [FEATURE, "main"], comment)


def test_our_status_comment_quoting_commands_triggers_nothing(world: CommandWorld) -> None:
    number = world.open_pr()
    world.command(number, world.say(number, "/ci-agent frobnicate"))  # our answer lists every command
    (ours,) = [c for c in world.comments_on(number) if c["user"] == ACTIONS_BOT]
    assert "/ci-agent fix" in ours["body"]
    since, calls = len(world.github.requests), model_calls(world)

    run = world.command(number, ours["id"])

    assert run.outputs["outcome"] == "skipped", str(run)
    assert_ignored(world, since, calls, [FEATURE, "main"], ours["id"])


def test_our_own_comment_with_a_command_line_triggers_nothing(world: CommandWorld) -> None:
    """With a PAT, our account is a person's (octocat, an admin): a comment of ours whose line
    starts with a command (a quoted failure log, say) still never runs one."""
    number, _ = red_pr(world)
    answer(world, "broken", "fix")
    comment = world.say(number, "### ci-agent: status\n\n/ci-agent fix\n", "octocat", association="OWNER")
    since = len(world.github.requests)

    run = world.command(number, comment, inputs={"github_token": USER_TOKEN})

    assert run.outputs["outcome"] == "skipped", str(run)
    assert_ignored(world, since, 0, [FEATURE, "main"], comment)


@pytest.mark.parametrize("body", [
    "> /ci-agent fix\n\nWhy did you ask it that?",
    "Try this:\n\n```\n/ci-agent fix\n```\n",
    "    /ci-agent fix\n",
    "<!--\n/ci-agent fix\n-->\nnot now",
    "please run /ci-agent fix",
], ids=["quote", "fence", "indented code", "html comment", "mid-line"])
def test_a_writer_quoting_a_command_triggers_nothing(world: CommandWorld, body: str) -> None:
    number = world.open_pr()
    comment = world.say(number, body)
    since = len(world.github.requests)

    run = world.command(number, comment)

    assert run.outputs["outcome"] == "skipped", str(run)
    assert_ignored(world, since, 0, [FEATURE, "main"], comment)
