"""The harness base the slash-command scenarios share: one `Scene` per platform, each a thin
adapter over that platform's command world (tests/github_commands, tests/gitlab_commands), so a
behaviour both forges must show is written once and run on both.

A scene speaks of change requests (a GitHub pull request, a GitLab merge request), comments (an
issue comment, a note) and runs (the command workflow's job, the command pipeline's job); what
differs between the forges — names of branches, the 👀 as a reaction or an award emoji, outputs or
dotenv, how a command job is started — stays behind it.
"""

from __future__ import annotations

import contextlib
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from ci_agent.retry import Waiting, waiting_as
from tests.fakes.anthropic_fake import AnthropicFake
from tests.github_commands import harness as github
from tests.github_commands import steps as github_steps
from tests.github_scenarios import steps as github_scenario_steps
from tests.github_scenarios.harness import ACTIONS_BOT
from tests.gitlab_commands import harness as gitlab
from tests.gitlab_commands import steps as gitlab_steps
from tests.gitlab_scenarios import steps as gitlab_scenario_steps
from tests.scenarios import model_scripts as model
from tests.scenarios.sample_repos import PYTHON

RATINGS = PYTHON.fix.path


@dataclass(frozen=True)
class Ran:
    """One command job, as both forges leave it: exit code, the outputs the job reports, its log."""

    exit_code: int
    outcome: str
    attempt: str
    branch: str
    stdout: str
    shown: str  # the platform's own rendering of the run, for assertion messages

    def __str__(self) -> str:
        return self.shown


class Scene(ABC):
    platform = ""
    feature = ""  # the person's branch
    feature_fix = ""  # the fix branch ci-agent makes for it

    def __init__(self, world: Any) -> None:
        self.world = world

    # -- the stage -----------------------------------------------------------------------------
    @abstractmethod
    def red_change_request(self, branch: str = "") -> tuple[int, str]:
        """A person's change request whose CI failed (the sample's bug): its number and head."""

    @abstractmethod
    def change_request(self, branch: str = "") -> int:
        """A person's change request with no CI run (nothing may get as far as reading one)."""

    @abstractmethod
    def fork_change_request(self) -> int:
        """A change request from another project, its branch not on origin."""

    @abstractmethod
    def use_mode(self, mode: str) -> None:
        """The `mode` input of the jobs to come."""

    @abstractmethod
    def answer(self, current: str, target: str) -> None:
        """The model's next answer: a patch from sample version `current` to `target`."""

    @abstractmethod
    def say(self, number: int, body: str) -> int:
        """A person with write access comments `body`; the comment's id."""

    # -- the command job -----------------------------------------------------------------------
    @abstractmethod
    def command_job(self, number: int, comment_id: int) -> Callable[[], Ran]:
        """The job for this comment, started (its event or pipeline exists) but not run yet."""

    def command(self, number: int, comment_id: int) -> Ran:
        return self.command_job(number, comment_id)()

    # -- what is left --------------------------------------------------------------------------
    @abstractmethod
    def status_body(self, number: int) -> str:
        """The one status comment on the change request."""

    @abstractmethod
    def acknowledged(self, comment_id: int) -> bool:
        """Our account's 👀 on the comment, exactly once."""

    @abstractmethod
    def requests(self) -> int:
        """How many API requests the forge fake has seen."""

    @abstractmethod
    def writes(self, since: int) -> list[str]:
        """The API requests that changed something, from request `since` on."""

    @abstractmethod
    def change_requests(self) -> list[int]:
        """The numbers of every change request the forge holds."""

    @abstractmethod
    def labels_and_title(self, number: int) -> tuple[list[str], str]:
        """A change request's labels and title."""

    @abstractmethod
    def version(self, name: str) -> str:
        """The sample file's text at version `name`."""

    def model_calls(self) -> int:
        return len(self.world.api.message_requests)

    def first_prompt(self) -> str:
        return model.first_user_text(self.world.api.message_requests[0])

    def origin_branches(self) -> list[str]:
        return list(self.world.origin_branches())

    def origin_tip(self, branch: str) -> str | None:
        tip: str | None = self.world.origin_tip(branch)
        return tip

    def commits(self, since: str, branch: str) -> list[str]:
        return list(self.world.commits(since, branch))

    def show(self, branch: str, path: str) -> str:
        return str(self.world.show(branch, path))


class GitHubScene(Scene):
    platform = "github"
    feature = github_steps.FEATURE
    feature_fix = github_steps.FEATURE_FIX
    inputs: dict[str, str] | None = None

    def red_change_request(self, branch: str = "") -> tuple[int, str]:
        number, ci = github_steps.red_pr(self.world, branch or self.feature)
        return number, ci.sha

    def change_request(self, branch: str = "") -> int:
        return int(self.world.open_pr(branch or self.feature))

    def fork_change_request(self) -> int:
        return int(self.world.open_pr("patch-1", fork="stranger/app", user="stranger"))

    def use_mode(self, mode: str) -> None:
        self.inputs = {"mode": mode}

    def answer(self, current: str, target: str) -> None:
        github_scenario_steps.answer(self.world, current, target)

    def say(self, number: int, body: str) -> int:
        return int(self.world.say(number, body))

    def command_job(self, number: int, comment_id: int) -> Callable[[], Ran]:
        job = self.world.command_job(number, comment_id, inputs=self.inputs)

        def run() -> Ran:
            done = job.run()
            outputs = done.outputs
            return Ran(done.exit_code, outputs.get("outcome", ""), outputs.get("attempt", ""),
                       outputs.get("branch", ""), done.stdout, str(done))
        return run

    def status_body(self, number: int) -> str:
        return github_steps.status_body(self.world, number)

    def acknowledged(self, comment_id: int) -> bool:
        return github_steps.our_eyes(self.world, comment_id) == [(comment_id, "eyes", ACTIONS_BOT)]

    def writes(self, since: int) -> list[str]:
        return list(self.world.writes(since))

    def requests(self) -> int:
        return len(self.world.github.requests)

    def change_requests(self) -> list[int]:
        return list(self.world.github.pulls)

    def labels_and_title(self, number: int) -> tuple[list[str], str]:
        pull = self.world.github.pulls[number]
        return list(pull["labels"]), str(pull["title"])

    def version(self, name: str) -> str:
        return github_scenario_steps.version(self.world, name)


class GitLabScene(Scene):
    platform = "gitlab"
    feature = gitlab.FEATURE
    feature_fix = gitlab_steps.FEATURE_FIX

    def red_change_request(self, branch: str = "") -> tuple[int, str]:
        iid, red = self.world.red_mr(branch or self.feature)
        return int(iid), str(red.sha)

    def change_request(self, branch: str = "") -> int:
        return int(self.world.feature_mr(branch or self.feature))

    def fork_change_request(self) -> int:
        tip = self.world.origin_tip("main")
        assert tip is not None
        made = self.world.gitlab.new_merge_request("stars", "main", "Stars from a fork", author=gitlab.DEV,
                                                   source_project_id=99, sha=tip)
        return int(made)

    def use_mode(self, mode: str) -> None:
        self.world.include["mode"] = mode

    def answer(self, current: str, target: str) -> None:
        gitlab_scenario_steps.answer(self.world, current, target)

    def say(self, number: int, body: str) -> int:
        return int(self.world.say(number, body))

    def command_job(self, number: int, comment_id: int) -> Callable[[], Ran]:
        pipeline = self.world.start_command(number, comment_id)  # what the relay's worker does

        def run() -> Ran:
            done = self.world.job(pipeline)
            dotenv = done.dotenv
            return Ran(done.exit_code, dotenv.get("CI_AGENT_OUTCOME", ""), dotenv.get("CI_AGENT_ATTEMPT", ""),
                       dotenv.get("CI_AGENT_BRANCH", ""), done.stdout, str(done))
        return run

    def status_body(self, number: int) -> str:
        return str(self.world.status_body(number))

    def acknowledged(self, comment_id: int) -> bool:
        return bool(self.world.our_eyes(comment_id) == [("eyes", gitlab.BOT)])

    def writes(self, since: int) -> list[str]:
        return gitlab_steps.writes(self.world, since)

    def requests(self) -> int:
        return len(self.world.gitlab.requests)

    def change_requests(self) -> list[int]:
        return list(self.world.gitlab.merge_requests)

    def labels_and_title(self, number: int) -> tuple[list[str], str]:
        mr = self.world.gitlab.merge_requests[number]
        return list(mr["labels"]), str(mr["title"])

    def version(self, name: str) -> str:
        return gitlab_scenario_steps.version(self.world, name)


@contextlib.contextmanager
def scene_on(platform: str, tmp_path: Path, anthropic_fake: AnthropicFake, monkeypatch: pytest.MonkeyPatch,
             capfd: pytest.CaptureFixture[str]) -> Iterator[Scene]:
    """The platform's command world, its clients' retry waits recorded instead of slept (as the
    platform's own `forge_waits` fixture does; GitHub's without request spacing)."""
    waits: list[float] = []
    if platform == "github":
        with waiting_as(Waiting(sleep=waits.append, pace=False)), \
                github.command_world(tmp_path, anthropic_fake, monkeypatch, capfd) as hub:
            yield GitHubScene(hub)
    else:
        with waiting_as(Waiting(sleep=waits.append)), \
                gitlab.command_world(tmp_path, anthropic_fake, monkeypatch, capfd) as lab:
            yield GitLabScene(lab)
