"""Every platform reads its own variables into the same `ActionInputs` and refuses the same bad
values with the same sentence (`engine.types.read_inputs` is the one validator)."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import pytest

from ci_agent.engine.types import ActionInputs
from ci_agent.errors import UsageError
from ci_agent.platforms.github.env import action_inputs, input_env_name
from ci_agent.platforms.gitlab.env import gitlab_input_env_name, gitlab_inputs

Reader = Callable[[Mapping[str, str]], ActionInputs]
READERS: dict[str, tuple[Reader, Callable[[str], str]]] = {
    "github": (action_inputs, input_env_name),
    "gitlab": (gitlab_inputs, gitlab_input_env_name),
}
GIVEN = {"build_logs": "a.log\nb.log, a.log", "test_results": "", "verify": " make check ",
         "mode": "propose", "max_attempts": "5", "model": "claude-x", "config": "", "draft": "False",
         "dry_run": "TRUE"}


@pytest.mark.parametrize("platform", READERS)
def test_the_same_text_gives_the_same_inputs(platform: str) -> None:
    read, variable = READERS[platform]
    inputs = read({variable(name): value for name, value in GIVEN.items()})
    assert inputs == ActionInputs(build_logs=("a.log", "b.log"), verify="make check", mode="propose",
                                  max_attempts=5, model="claude-x", draft=False, dry_run=True)


@pytest.mark.parametrize("platform", READERS)
@pytest.mark.parametrize(("name", "value", "sentence"), [
    ("mode", "yolo", "input mode must be one of pr, push, propose, not 'yolo'"),
    ("max_attempts", "11", "input max_attempts must be a whole number from 1 to 10, not '11'"),
    ("max_attempts", "two", "input max_attempts must be a whole number from 1 to 10, not 'two'"),
    ("draft", "yes", "input draft must be true or false, not 'yes'"),
    ("dry_run", "1", "input dry_run must be true or false, not '1'"),
])
def test_the_same_bad_value_is_refused_with_the_same_sentence(platform: str, name: str, value: str,
                                                              sentence: str) -> None:
    read, variable = READERS[platform]
    with pytest.raises(UsageError) as refused:
        read({variable(name): value})
    assert str(refused.value) == sentence


def test_secrets_come_from_each_platforms_own_place() -> None:
    github = action_inputs({"INPUT_ANTHROPIC_API_KEY": " k ", "INPUT_GITHUB_TOKEN": "t"})
    gitlab = gitlab_inputs({"ANTHROPIC_API_KEY": " k ", "CI_AGENT_GITLAB_TOKEN": " t ",
                            "CI_AGENT_INPUT_ANTHROPIC_API_KEY": "ignored"})
    assert (github.anthropic_api_key, github.token) == (gitlab.anthropic_api_key, gitlab.token) == ("k", "t")
