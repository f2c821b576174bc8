"""The shipped workflow templates (pipelines/github/) decide whether the scenarios' ci-agent jobs
happen at all: their `if:` conditions are evaluated here against the same payloads the
scenarios write, as GitHub would evaluate them (tests/github_scenarios/gh_expr.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.github_scenarios.fake_site import pull_request_event, push_event, workflow_run_event
from tests.github_scenarios.gh_expr import evaluate_if
from tests.github_scenarios.harness import FIX_BRANCH

ROOT = Path(__file__).resolve().parents[2]
ON_FAILURE = ROOT / "pipelines" / "github" / "ci-agent-on-failure.yml"
INLINE = ROOT / "pipelines" / "github" / "ci-agent-inline.yml"
REPO = "octo/app"
SHA = "3484a3fb816e0859fd6e1cea078d76385ff50625"


def _template(path: Path) -> dict[str, Any]:
    if not path.is_file():
        pytest.skip(f"{path.relative_to(ROOT)} is not in this checkout")
    data = yaml.safe_load(path.read_text())
    assert isinstance(data, dict)
    return data


def _job(path: Path) -> dict[str, Any]:
    (job,) = _template(path)["jobs"].values()
    assert isinstance(job, dict)
    return job


def _step(job: dict[str, Any], *, uses: str = "", name: str = "") -> dict[str, Any]:
    for step in job["steps"]:
        if (uses and str(step.get("uses", "")).startswith(uses)) or (name and step.get("name") == name):
            assert isinstance(step, dict)
            return step
    raise AssertionError(f"no step {uses or name}")


def _context(event_name: str, payload: dict[str, Any], ref_name: str = "main",
             head_ref: str = "") -> dict[str, Any]:
    return {"github": {"event_name": event_name, "event": payload, "repository": REPO,
                       "ref_name": ref_name, "head_ref": head_ref, "token": "ghs_x"},
            "secrets": {}, "vars": {}, "inputs": {}}


def _run_payload(branch: str, conclusion: str, head_repository: str = REPO) -> dict[str, Any]:
    url = f"https://api.github.com/repos/{REPO}/actions/runs/77"
    run = {"id": 77, "name": "CI", "node_id": "WFR_77", "status": "completed", "conclusion": conclusion,
           "head_branch": branch, "head_sha": SHA, "event": "push", "run_attempt": 1, "run_number": 77,
           "workflow_id": 7, "path": ".github/workflows/ci.yml", "display_title": "CI", "url": url,
           "html_url": f"https://github.com/{REPO}/actions/runs/77", "jobs_url": f"{url}/jobs",
           "artifacts_url": f"{url}/artifacts", "logs_url": f"{url}/logs", "pull_requests": [],
           "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:05:00Z"}
    return workflow_run_event(REPO, run, head_repository=head_repository)


# -- the evaluator, on examples from GitHub's expressions documentation ---------------------------

def test_expression_evaluator() -> None:
    ctx = _context("push", {"ref": "refs/heads/main"})
    assert evaluate_if("github.event_name == 'PUSH'", ctx), "string comparison ignores case"
    assert evaluate_if("${{ startsWith(github.event.ref, 'refs/heads/') }}", ctx)
    assert not evaluate_if("github.event.missing.deeper == 'x'", ctx), "a missing property is null"
    assert not evaluate_if("github.event_name == 'push'", ctx, status="failure"), "implicit success()"
    assert evaluate_if("failure() && github.event_name != 'pull_request'", ctx, status="failure")
    assert evaluate_if("!cancelled() && (false || 'x' == 'X')", ctx)


# -- workflow_run template ----------------------------------------------------------------------

def test_a_failed_run_of_the_repository_gets_a_checkout_and_ci_agent() -> None:
    job = _job(ON_FAILURE)
    for branch in ("main", FIX_BRANCH):  # a source branch, and the fix branch's next CI verdict
        ctx = _context("workflow_run", _run_payload(branch, "failure"))
        assert evaluate_if(job.get("if"), ctx), branch
        assert evaluate_if(_step(job, uses="actions/checkout").get("if"), ctx), branch


def test_a_fork_run_is_never_checked_out() -> None:
    job = _job(ON_FAILURE)
    ctx = _context("workflow_run", _run_payload("main", "failure", head_repository="evil/app"))
    assert not (evaluate_if(job.get("if"), ctx)
                and evaluate_if(_step(job, uses="actions/checkout").get("if"), ctx))


def test_a_green_run_of_a_source_branch_starts_nothing() -> None:
    job = _job(ON_FAILURE)
    assert not evaluate_if(job.get("if"), _context("workflow_run", _run_payload("main", "success")))


def test_green_ci_on_the_fix_branch_reaches_ci_agent() -> None:
    """DESIGN.md §4.3 / issue 5: a success comment when CI goes green on the fix branch, and the
    PR marked ready for review (test_github_fixed.py shows ci-agent does it when it runs)."""
    job = _job(ON_FAILURE)
    ctx = _context("workflow_run", _run_payload(FIX_BRANCH, "success"))
    assert evaluate_if(job.get("if"), ctx)
    assert evaluate_if(_step(job, name="ci-agent fix").get("if"), ctx)


# -- inline template ---------------------------------------------------------------------------

def test_inline_step_runs_after_a_failed_step_but_not_for_a_fork_pr() -> None:
    step = _step(_job(INLINE), name="ci-agent fix")
    push = _context("push", push_event(REPO, "main", "0" * 40, SHA, "octocat"))
    assert evaluate_if(step.get("if"), push, status="failure")
    assert not evaluate_if(step.get("if"), push, status="success")
    own = pull_request_event(REPO, 5, REPO, "feature", SHA, "main", SHA, "octocat")
    fork = pull_request_event(REPO, 6, "evil/app", "main", SHA, "main", SHA, "mallory")
    assert evaluate_if(step.get("if"), _context("pull_request", own, "5/merge", "feature"), "failure")
    assert not evaluate_if(step.get("if"), _context("pull_request", fork, "6/merge", "main"), "failure")
