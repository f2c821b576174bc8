"""`ci-agent fix --github` as the container runs it: `python -m ci_agent fix --github` in a child
process with only the job's environment. Two jobs for the same failure at once (a concurrency
group that failed to serialise them, or two workflows) neither double-count nor overwrite; a run
whose artifacts expired is still fixed from its log."""

from __future__ import annotations

from ci_agent.engine.forge import parse_marker
from tests.github_scenarios.harness import FIX_BRANCH, USER_TOKEN, World
from tests.github_scenarios.steps import assert_fix_pr_outputs, the_status_comment
from tests.platform_scenarios.steps import answer, model_calls, version
from tests.scenarios.sample_repos import PYTHON


def test_the_entrypoint_in_a_child_process(world: World) -> None:
    world.inputs["github_token"] = USER_TOKEN
    answer(world, "broken", "fix")

    run = world.after_ci(world.ci("main"), process=True)

    assert run.exit_code == 0, str(run)
    assert_fix_pr_outputs(world, run, "committed", attempt=1)
    assert run.stdout.startswith("::add-mask::"), "masks come first"
    assert world.show(FIX_BRANCH, PYTHON.fix.path) == version(world, "fix")


def test_two_jobs_at_once_make_one_attempt(world: World) -> None:
    world.inputs["github_token"] = USER_TOKEN
    red = world.ci("main")
    answer(world, "broken", "fix")
    answer(world, "broken", "fix")
    main_tip = world.origin_tip("main")
    assert main_tip is not None

    jobs = [world.job_after_ci(red, run_id=run_id).start() for run_id in (6001, 6002)]
    runs = [job.wait() for job in jobs]

    assert [r.exit_code for r in runs] == [0, 0], "\n\n".join(map(str, runs))
    outcomes = sorted(r.outputs.get("outcome", "") for r in runs)
    # the loser's fast-forward-only push is refused (or it sees the attempt waiting for CI): skipped
    assert outcomes == ["committed", "skipped"], outcomes
    (tip,) = world.commits(main_tip, FIX_BRANCH)  # one attempt on the branch, whoever won
    assert world.trailers(tip).get("CI-Agent-Attempt") == ["1"]
    assert len(world.pulls_from(FIX_BRANCH)) == 1
    pull = world.fix_pull()
    status = the_status_comment(world, pull["number"])
    assert [c for c in world.comments_on(pull["number"]) if parse_marker(c["body"]) is None] == []
    assert status["body"]
    assert model_calls(world) <= 2


def test_expired_artifacts_leave_the_log(world: World) -> None:
    world.inputs["github_token"] = USER_TOKEN
    red = world.ci("main")
    for artifact in world.github.runs[red.id].artifacts:
        artifact["expired"] = True
    answer(world, "broken", "fix")

    run = world.after_ci(red)

    assert run.exit_code == 0, str(run)
    assert_fix_pr_outputs(world, run, "committed", attempt=1)
    report = world.api.message_requests[0]["messages"][0]["content"]
    assert "test_no_ratings_yet" in str(report) and "junit.xml" not in str(report)
    assert "expired" in (run.stdout + run.stderr + run.summary).lower(), "the missing results are mentioned"
    assert not world.github.requests_to("GET", r"/repos/octo/app/actions/artifacts/\d+/zip")
