"""Service faults on the GitHub escalation job: the budget (`max_attempts: 1`) is spent, the job
posts the escalation comment, labels the fix PR `ci-agent:escalated` and edits the status
comment, exit 3. Faults hit its writes only (its reads are the reference job's, covered in
test_forge_faults.py): every kind at the escalation comment's POST (the write whose duplicate
the issue names), a 429 storm and a timeout at the label and at the status comment's edit.
Then the fault is lifted and the job is rerun: one escalation comment, one status comment, the
label, the one failed attempt, and no model call after attempt 1."""

from __future__ import annotations

import pytest

from ci_agent.engine.forge import parse_marker
from tests.fakes import github_fake
from tests.fakes.github_fake import Fault
from tests.github_scenarios.harness import FIX_BRANCH, USER_TOKEN, World
from tests.github_scenarios.steps import fail_attempts
from tests.hardening.faults.cycles import GitHubCycle
from tests.hardening.faults.matrix import (
    HOLD_S,
    HTTP_5XX,
    KINDS,
    STORM,
    STORM_LENGTH,
    TIMEOUT,
    assert_faulted_job_is_clean,
)

BUDGET_EXHAUSTED = 3
R = "/repos/octo/app"
WRITES = {"escalation": ("POST", rf"^{R}/issues/1/comments$"),
          "label": ("POST", rf"^{R}/issues/1/labels$"),
          "status": ("PATCH", rf"^{R}/issues/comments/\d+$")}
POINTS = [*(("escalation", kind) for kind in KINDS), ("label", STORM), ("label", TIMEOUT),
          ("status", STORM), ("status", TIMEOUT)]


def escalation_job_ready(world: World) -> None:
    world.inputs.update(github_token=USER_TOKEN, max_attempts="1")
    fail_attempts(world, 1)  # attempt 1 pushed, its CI run on the fix branch red


def inject(world: World, write: str, kind: str) -> Fault:
    method, path = WRITES[write]
    if kind == STORM:
        fault = Fault(github_fake.rate_limited_429("1"), path, method, STORM_LENGTH)
    elif kind == HTTP_5XX:
        fault = Fault(github_fake.server_error(502), path, method)
    else:
        fault = Fault(github_fake.Reply(0), path, method, 1, 0, kind, HOLD_S)
    world.github.faults.append(fault)
    return fault


def test_the_clean_escalation(github_world: World) -> None:
    escalation_job_ready(github_world)
    done = GitHubCycle(github_world).job(github_world.ci_runs[-1], 1)
    assert done.code == BUDGET_EXHAUSTED, done
    assert_escalated_once(github_world, "clean")


def assert_escalated_once(world: World, at: str) -> None:
    pull = world.fix_pull()
    assert pull["state"] == "open"
    comments = world.comments_on(pull["number"])
    ours = [c for c in comments if parse_marker(c["body"]) is not None]
    assert len(ours) == 1, f"{at}: status comments {len(ours)}"
    escalations = [c for c in comments if parse_marker(c["body"]) is None and "escalated after" in c["body"]]
    assert len(escalations) == 1, f"{at}: escalation comments {len(escalations)}"
    assert pull["labels"].count("ci-agent:escalated") == 1, f"{at}: labels {pull['labels']}"
    assert "escalated" in ours[0]["body"].lower(), f"{at}: the status comment says so"
    main_tip = world.origin_tip("main")
    assert main_tip is not None
    attempts = [world.trailers(sha).get("CI-Agent-Attempt") for sha in world.commits(main_tip, FIX_BRANCH)]
    assert attempts == [["1"]], f"{at}: {attempts}"
    assert len(world.api.message_requests) == 1, f"{at}: no model call after the budget is spent"


@pytest.mark.parametrize(("write", "kind"), [pytest.param(w, k, id=f"{w}-{k}") for w, k in POINTS])
def test_a_fault_at_each_escalation_write_then_a_rerun_escalates_once(github_world: World, write: str,
                                                                      kind: str) -> None:
    at = f"{kind} on the {write} write"
    escalation_job_ready(github_world)
    red = github_world.ci_runs[-1]
    fault = inject(github_world, write, kind)
    cycle = GitHubCycle(github_world)

    faulted = cycle.job(red, 1)

    assert fault.times < (STORM_LENGTH if kind == STORM else 1), f"{at}: the fault never hit"
    assert_faulted_job_is_clean(faulted, at, "GitHub", cycle.secrets, succeeded=(BUDGET_EXHAUSTED,))
    cycle.lift()
    rerun = cycle.job(red, 2)
    assert rerun.code in (0, BUDGET_EXHAUSTED) and not rerun.crash, f"{at}: the rerun: {rerun}"
    assert_escalated_once(github_world, at)
