"""Service faults on the model: every kind at each Messages API request of the GitHub reference
job (tests/github_scenarios' world), whose model conversation here has two requests: the model
reads shop/ratings.py with the `read_file` tool, then submits the fix.

Kinds: a 429 storm (more 429s with `retry-after` than the client's 5 attempts), one 529
overloaded, one 5xx (500/502/503 by index), a timeout (the answer held past
`CI_AGENT_MODEL_TIMEOUT_S`=1), a dropped connection, half the JSON of the answer. An injected
fault never takes a scripted answer, so the rerun's conversation is the one the fault cut short.
The whole matrix is run (no rotation): 2 requests x 6 kinds.
"""

from __future__ import annotations

import pytest

from tests.fakes import anthropic_fake
from tests.fakes.breakage import DROP, PARTIAL, TIMEOUT
from tests.github_scenarios.harness import World
from tests.hardening.faults.cycles import GitHubCycle
from tests.hardening.faults.matrix import (
    HOLD_S,
    HTTP_5XX,
    SERVER_ERRORS,
    STORM,
    STORM_LENGTH,
    assert_faulted_job_is_clean,
)
from tests.scenarios import model_scripts as model

OVERLOADED = "529"
MODEL_KINDS = (STORM, OVERLOADED, HTTP_5XX, TIMEOUT, DROP, PARTIAL)
MODEL_REQUESTS = 2  # read_file, then submit_patch


def inject(world: World, index: int, kind: str) -> anthropic_fake.Injected:
    api = world.api
    if kind == STORM:
        api.inject(anthropic_fake.rate_limited("1"), times=STORM_LENGTH, skip=index)
    elif kind == OVERLOADED:
        api.inject(anthropic_fake.overloaded(), skip=index)
    elif kind == HTTP_5XX:
        status = SERVER_ERRORS[index % len(SERVER_ERRORS)]
        api.inject(anthropic_fake.Fault(status, "api_error", "Internal server error"), skip=index)
    else:
        api.inject(kind, skip=index, hold_s=HOLD_S)
    return api.injected[-1]


def test_the_clean_conversation_is_the_reference(github_world: World) -> None:
    cycle = GitHubCycle(github_world)
    ci = cycle.setup()
    github_world.api.reply(model.read_file("shop/ratings.py"))
    done = cycle.job(ci, 1)
    assert done.code == 0 and not done.crash, done
    requests = github_world.api.message_requests
    assert len(requests) == MODEL_REQUESTS
    assert [c["name"] for c in model.tool_calls(requests[1])] == ["read_file"], "the second answers read_file"
    cycle.assert_converged(done, "clean")


# Why a fault point breaks an invariant today (xfail, strict: a fix makes the test say so).
KNOWN: dict[tuple[int, str], str] = {}


def _params() -> list[object]:
    params: list[object] = []
    for index in range(MODEL_REQUESTS):
        for kind in MODEL_KINDS:
            reason = KNOWN.get((index, kind))
            marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
            params.append(pytest.param(index, kind, id=f"{index}-{kind}", marks=marks))
    return params


@pytest.mark.parametrize(("index", "kind"), _params())
def test_a_model_fault_at_each_request_then_a_rerun_converges(github_world: World, index: int,
                                                               kind: str) -> None:
    at = f"model request #{index} {kind}"
    cycle = GitHubCycle(github_world)
    ci = cycle.setup()
    github_world.api.reply(model.read_file("shop/ratings.py"))
    injected = inject(github_world, index, kind)

    faulted = cycle.job(ci, 1)

    assert injected.times < (STORM_LENGTH if kind == STORM else 1), f"{at}: the fault never hit"
    assert_faulted_job_is_clean(faulted, at, "Anthropic", cycle.secrets)
    if kind in (STORM, TIMEOUT):  # more than the client retries, or never retried: the job stops
        assert faulted.code == 5, f"{at}: {faulted}"
    github_world.api.injected.clear()
    rerun = cycle.job(ci, 2)
    cycle.assert_converged(rerun, at)
