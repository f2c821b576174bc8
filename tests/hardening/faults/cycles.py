"""The reference job of the fault tests on each forge (the scenario worlds, imported): its setup,
one run of it, its clean run's API requests, a fault aimed at one of them, and the state every
rerun must converge to.

GitHub: the workflow_run job after a red CI run on main; a rerun is "Re-run jobs" (same run id,
`run_attempt` + 1). GitLab: the include's `ci-agent-fix` job after a failed pipeline on main; a
rerun is GitLab's Retry (a new job of the same pipeline). Both: attempt 1's patch pushed to the
fix branch, the draft fix PR / MR opened and labelled, the status comment / note written."""

from __future__ import annotations

import traceback
from typing import Any, ClassVar

from ci_agent.errors import ExitCode
from tests.fakes import github_fake, gitlab_fake
from tests.fakes.github_fake import Fault as HubFault
from tests.fakes.gitlab_fake import Fault as LabFault
from tests.github_scenarios import harness as github
from tests.gitlab_scenarios import harness as gitlab
from tests.hardening.faults.matrix import (
    CLIENT_TIMEOUT_S,
    HOLD_S,
    HTTP_5XX,
    STORM,
    STORM_LENGTH,
    Outcome,
    Point,
    Request,
    tokens_in,
)
from tests.hardening.platforms import FIX_BRANCH, GitHubSide, GitLabSide, Side
from tests.scenarios import model_scripts as model
from tests.scenarios.harness import ROOT_CAUSE, SUMMARY

RUN_ID = 5150
R = "/repos/octo/app"
P = "/api/v4/projects/acme/shop"
# The clean runs' requests in order (test_the_clean_run_is_the_reference checks them): the fault
# points aim at these. Before the model, the flaky check re-runs the failed jobs once (issue 16:
# the run's state, the re-run, the re-run's state and jobs; the fakes' re-run fails again).
GITHUB_REFERENCE = tuple(Request(*line.split()) for line in f"""
    api GET {R}/collaborators/octocat/permission
    api GET {R}
    api GET {R}/pulls
    api GET {R}/pulls
    api GET {R}/branches/{FIX_BRANCH}
    api GET {R}/actions/runs/9101
    api GET {R}/actions/runs/9101/jobs
    api GET {R}/actions/jobs/1001
    api GET {R}/actions/jobs/1001/logs
    storage GET /logs/1001
    api GET {R}/actions/runs/9101
    api GET {R}/actions/runs/9101/artifacts
    api GET {R}/actions/artifacts/1002/zip
    storage GET /zips/1002
    api GET {R}/actions/runs/9101
    api POST {R}/actions/runs/9101/rerun-failed-jobs
    api GET {R}/actions/runs/9101
    api GET {R}/actions/runs/9101/jobs
    api GET {R}/pulls
    api POST {R}/pulls
    api POST {R}/issues/1/labels
    api GET {R}/issues/1/comments
    api GET /user
    api GET {R}/issues/1/comments
    api POST {R}/issues/1/comments
    api GET {R}/issues/1/comments
""".strip().splitlines())
GITLAB_REFERENCE = tuple(Request("api", *line.split()) for line in f"""
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
    GET {P}/pipelines/1001/jobs
    POST {P}/jobs/5002/retry
    GET {P}/pipelines/1001
    GET /api/v4/projects/42/pipelines/1001/jobs
    GET {P}/merge_requests
    POST {P}/merge_requests
    PUT {P}/merge_requests/1
    GET {P}/merge_requests/1/notes
    GET /api/v4/user
    GET {P}/merge_requests/1/notes
    POST {P}/merge_requests/1/notes
    GET {P}/merge_requests/1/notes
""".strip().splitlines())
MODEL_TIMEOUT = {"CI_AGENT_MODEL_TIMEOUT_S": str(CLIENT_TIMEOUT_S)}


def _patch_always(side: Side) -> None:
    fix = model.submit_patch(side.version_diff("broken", "fix"), summary=SUMMARY, root_cause=ROOT_CAUSE)
    side.world.api.reply_always(fix)


def _outcome(run: Any) -> Outcome:
    """A finished job (either harness's record) as the invariants read it."""
    outputs = run.outputs if isinstance(run, github.ActionRun) else run.dotenv
    written = "\n".join(f"{k}={v}" for k, v in outputs.items()) + "\n" + run.summary
    config = run.workspace / ".git" / "config"
    return Outcome(run.exit_code, run.stdout, run.stderr, written,
                   git_config=config.read_text() if config.exists() else "")


def _crashed(capfd: Any) -> Outcome:
    """What escaped main() is the finding."""
    out, err = capfd.readouterr()
    return Outcome(1, out, err, "", traceback.format_exc())


class GitHubCycle:
    service: ClassVar[str] = "GitHub"
    secrets: ClassVar[tuple[str, ...]] = (github.API_KEY, github.USER_TOKEN, github.ACTIONS_TOKEN)
    reference: ClassVar[tuple[Request, ...]] = GITHUB_REFERENCE
    writer: ClassVar[str] = "octocat"  # the account of the token ci-agent is given

    def __init__(self, world: github.World) -> None:
        self.world = world
        self.side = GitHubSide(world)

    def setup(self) -> github.CiRun:
        self.world.inputs["github_token"] = github.USER_TOKEN  # a PAT: its pushes start CI by themselves
        self.world.inputs["max_attempts"] = "3"
        _patch_always(self.side)
        return self.world.ci("main")

    def job(self, ci: github.CiRun, attempt: int) -> Outcome:
        try:
            return _outcome(self.world.after_ci(ci, run_id=RUN_ID, run_attempt=attempt, env=MODEL_TIMEOUT))
        except Exception:
            return _crashed(self.world.capfd)

    def requests(self) -> list[Request]:
        return [Request(r.server, r.method, r.path) for r in self.world.github.requests]

    def inject(self, at: Point) -> HubFault:
        r = at.request
        if at.kind == STORM:
            storm = github_fake.rate_limited_429("1")
            fault = HubFault(storm, at.path_regex, r.method, STORM_LENGTH, at.skip, server=r.server)
        elif at.kind == HTTP_5XX:
            fault = HubFault(github_fake.server_error(at.status), at.path_regex, r.method, 1, at.skip,
                             server=r.server)
        else:
            broken = github_fake.Reply(0)  # never sent: the transport fault breaks the connection
            fault = HubFault(broken, at.path_regex, r.method, 1, at.skip, at.kind, HOLD_S, r.server)
        self.world.github.faults.append(fault)
        return fault

    def lift(self) -> None:
        self.world.github.faults.clear()

    def assert_converged(self, rerun: Outcome, at: object) -> None:
        assert_converged(self, rerun, at)


class GitLabCycle:
    service: ClassVar[str] = "GitLab"
    secrets: ClassVar[tuple[str, ...]] = (gitlab.API_KEY, gitlab.BOT_TOKEN, gitlab.JOB_TOKEN)
    reference: ClassVar[tuple[Request, ...]] = GITLAB_REFERENCE
    writer: ClassVar[str] = gitlab.BOT  # the project access token's bot

    def __init__(self, world: gitlab.World) -> None:
        self.world = world
        self.side = GitLabSide(world)

    def setup(self) -> gitlab.Pipeline:
        _patch_always(self.side)
        return self.world.pipeline("main")

    def job(self, pipeline: gitlab.Pipeline, attempt: int) -> Outcome:
        """`attempt` is the job's place in the pipeline's retries: each is a new job."""
        try:
            return _outcome(self.world.job(pipeline, env=MODEL_TIMEOUT))
        except Exception:
            return _crashed(self.world.capfd)

    def requests(self) -> list[Request]:
        return [Request("api", r.method, r.path) for r in self.world.gitlab.requests]

    def inject(self, at: Point) -> LabFault:
        r = at.request
        if at.kind == STORM:
            fault = LabFault(gitlab_fake.rate_limited("1"), at.path_regex, r.method, STORM_LENGTH, at.skip)
        elif at.kind == HTTP_5XX:
            fault = LabFault(gitlab_fake.server_error(at.status), at.path_regex, r.method, 1, at.skip)
        else:
            fault = LabFault(gitlab_fake.Reply(0), at.path_regex, r.method, 1, at.skip, at.kind, HOLD_S)
        self.world.gitlab.add_fault(fault)
        return fault

    def lift(self) -> None:
        self.world.gitlab.faults.clear()

    def assert_converged(self, rerun: Outcome, at: object) -> None:
        assert_converged(self, rerun, at)


Cycle = GitHubCycle | GitLabCycle


def assert_converged(cycle: Cycle, rerun: Outcome, at: object) -> None:
    """One open fix PR / MR, labelled, with one status comment / note by the token's account that
    speaks of attempt 1 only, at most one escalation comment, one pushed attempt (the fix), and no
    token in what the rerun printed or wrote, or in what ci-agent sent to the forge."""
    side, world = cycle.side, cycle.world
    assert rerun.code == ExitCode.OK and not rerun.crash, f"{at}: the rerun failed:\n{rerun}"
    requests = side.fix_requests()
    assert len(requests) == 1 and side.open_fix() != [], f"{at}: fix requests {requests}"
    (number,) = side.open_fix()
    ours = side.status_comments(number)
    assert len(ours) == 1, f"{at}: status comments {[body[:80] for _, body in ours]}"
    ((author, body),) = ours
    assert author == cycle.writer, f"{at}: written by the token's account"
    escalations = [b for b in side.bodies(number) if "escalated after" in b]
    assert len(escalations) <= 1, f"{at}: duplicate escalation comments"
    main_tip = world.origin_tip("main")
    assert main_tip is not None
    attempts = [world.trailers(sha).get("CI-Agent-Attempt") for sha in world.commits(main_tip, FIX_BRANCH)]
    assert attempts == [["1"]], f"{at}: one pushed attempt, numbered 1: {attempts}"
    assert world.show(FIX_BRANCH, "shop/ratings.py") == side.version("fix")
    assert "attempt 1" in body.lower() and "attempt 2" not in body.lower(), at
    assert "ci-agent" in requests[0]["labels"], f"{at}: the fix request is labelled"
    assert tokens_in(rerun.stdout + rerun.stderr + rerun.written + side.forge_text(), cycle.secrets) == []
