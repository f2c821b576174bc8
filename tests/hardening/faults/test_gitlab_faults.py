"""Service faults on the GitLab fix cycle: a fault at every API request of the reference job.

The reference job is tests/gitlab_scenarios' `ci-agent-fix` job after a failed pipeline on main
(attempt 1: the model's patch is pushed to the fix branch, the draft merge request opened and
labelled, the status note written). For each request index k of its clean run, a fresh world
injects a fault at exactly request k and runs the job; then the fault is lifted and the job is
retried (GitLab's Retry: a new job of the same pipeline) and must converge. See matrix.py.
"""

from __future__ import annotations

import traceback

import pytest

from ci_agent.engine.forge import parse_marker
from ci_agent.errors import ExitCode
from tests.fakes import gitlab_fake
from tests.fakes.gitlab_fake import Fault
from tests.github_scenarios.harness import ROOT_CAUSE, SUMMARY
from tests.github_scenarios.steps import diff
from tests.gitlab_scenarios.harness import API_KEY, BOT, BOT_TOKEN, FIX_BRANCH, JOB_TOKEN, Pipeline, World
from tests.gitlab_scenarios.steps import version
from tests.hardening.faults.matrix import (
    CLIENT_TIMEOUT_S,
    HOLD_S,
    HTTP_5XX,
    STORM,
    STORM_LENGTH,
    Outcome,
    Point,
    Request,
    assert_faulted_job_is_clean,
    point,
    rotated,
    tokens_in,
)
from tests.scenarios import model_scripts as model

SECRETS = (API_KEY, BOT_TOKEN, JOB_TOKEN)
P = "/api/v4/projects/acme/shop"
# The clean run's requests in order (test_the_clean_run_is_the_reference checks them).
REFERENCE = tuple(Request("api", *line.split()) for line in f"""
    GET {P}/members/all
    GET {P}
    GET {P}/merge_requests
    GET {P}/merge_requests
    GET {P}/protected_branches
    GET {P}/pipelines/1001/jobs
    GET {P}/jobs/5002
    GET {P}/jobs/5002/trace
    GET {P}/pipelines/1001/jobs
    GET {P}/jobs/5002/artifacts
    GET {P}/merge_requests
    POST {P}/merge_requests
    PUT {P}/merge_requests/1
    GET {P}/merge_requests/1/notes
    GET /api/v4/user
    GET {P}/merge_requests/1/notes
    POST {P}/merge_requests/1/notes
    GET {P}/merge_requests/1/notes
""".strip().splitlines())
READ_KINDS = 1  # kinds per read request (rotating); every kind at each write: see matrix.rotated


def setup(world: World) -> Pipeline:
    fix = diff(version(world, "broken"), version(world, "fix"))
    world.api.reply_always(model.submit_patch(fix, summary=SUMMARY, root_cause=ROOT_CAUSE))
    return world.pipeline("main")


def job(world: World, pipeline: Pipeline) -> Outcome:
    env = {"CI_AGENT_MODEL_TIMEOUT_S": str(CLIENT_TIMEOUT_S)}
    try:
        done = world.job(pipeline, env=env)
    except Exception:  # what escapes main() is the finding
        out, err = world.capfd.readouterr()
        return Outcome(1, out, err, "", traceback.format_exc())
    written = "\n".join(f"{k}={v}" for k, v in done.dotenv.items()) + "\n" + done.summary
    config = done.workspace / ".git" / "config"
    return Outcome(done.exit_code, done.stdout, done.stderr, written,
                   git_config=config.read_text() if config.exists() else "")


def inject(world: World, at: Point) -> Fault:
    fake, r = world.gitlab, at.request
    if at.kind == STORM:
        fault = Fault(gitlab_fake.rate_limited("1"), at.path_regex, r.method, STORM_LENGTH, at.skip)
    elif at.kind == HTTP_5XX:
        fault = Fault(gitlab_fake.server_error(at.status), at.path_regex, r.method, 1, at.skip)
    else:
        fault = Fault(gitlab_fake.Reply(0), at.path_regex, r.method, 1, at.skip, at.kind, HOLD_S)
    fake.add_fault(fault)
    return fault


def assert_converged(world: World, rerun: Outcome, at: Point) -> None:
    assert rerun.code == ExitCode.OK and not rerun.crash, f"{at}: the rerun failed:\n{rerun}"
    mrs = world.mrs_from(FIX_BRANCH)
    assert len(mrs) == 1 and mrs[0]["state"] == "opened", f"{at}: fix MRs {mrs}"
    iid = mrs[0]["iid"]
    ours = [n for n in world.notes_on(iid) if parse_marker(n["body"]) is not None]
    assert len(ours) == 1, f"{at}: status notes {[n['body'][:80] for n in ours]}"
    assert ours[0]["author"]["username"] == BOT, f"{at}: written by the access token's bot"
    escalations = [n for n in world.notes_on(iid) if "escalated after" in n["body"]]
    assert len(escalations) <= 1, f"{at}: duplicate escalation notes"
    main_tip = world.origin_tip("main")
    assert main_tip is not None
    attempts = [world.trailers(sha).get("CI-Agent-Attempt") for sha in world.commits(main_tip, FIX_BRANCH)]
    assert attempts == [["1"]], f"{at}: one pushed attempt, numbered 1: {attempts}"
    assert world.show(FIX_BRANCH, "shop/ratings.py") == version(world, "fix")
    body = ours[0]["body"].lower()
    assert "attempt 1" in body and "attempt 2" not in body, at
    assert "ci-agent" in mrs[0]["labels"], f"{at}: the fix MR is labelled"
    sent = "\n".join(str(r.body) for r in world.gitlab.requests if r.body)
    assert tokens_in(rerun.stdout + rerun.stderr + rerun.written + sent, SECRETS) == []


def test_the_clean_run_is_the_reference(gitlab_world: World) -> None:
    pipeline = setup(gitlab_world)
    start = len(gitlab_world.gitlab.requests)
    done = job(gitlab_world, pipeline)
    assert done.code == 0 and not done.crash, done
    seen = tuple(Request("api", r.method, r.path) for r in gitlab_world.gitlab.requests[start:])
    assert seen == REFERENCE, "\n".join(f"{r.method} {r.path}" for r in seen)
    assert_converged(gitlab_world, done, point(REFERENCE, 0, STORM))


# Why a fault point breaks an invariant today (xfail, strict: a fix makes the test say so). The
# finding of this matrix (the fix MR left unlabelled when the job stopped between opening and
# labelling it) is fixed; none is left.
KNOWN: dict[str, str] = {}


def known(at: Point) -> str | None:
    return KNOWN.get(f"{at.index:02d}-{at.kind}")


def _params() -> list[object]:
    params: list[object] = []
    for index, kind in rotated(REFERENCE, READ_KINDS):
        reason = known(point(REFERENCE, index, kind))
        marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
        params.append(pytest.param(index, kind, id=f"{index:02d}-{kind}", marks=marks))
    return params


@pytest.mark.parametrize(("index", "kind"), _params())
def test_a_fault_at_each_request_then_a_retry_converges(gitlab_world: World, index: int, kind: str) -> None:
    at = point(REFERENCE, index, kind)
    pipeline = setup(gitlab_world)
    fault = inject(gitlab_world, at)

    faulted = job(gitlab_world, pipeline)

    assert fault.times < (STORM_LENGTH if kind == STORM else 1), f"{at}: the fault never hit"

    assert_faulted_job_is_clean(faulted, at, "GitLab", SECRETS)
    gitlab_world.gitlab.faults.clear()
    rerun = job(gitlab_world, pipeline)
    assert_converged(gitlab_world, rerun, at)

