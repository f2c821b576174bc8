"""`check_flaky` (ci_agent/engine/triage_flaky.py): the forge runs the failed jobs once more before
any model call (issue 16). Through the real PyGithub and python-gitlab clients against the forge
fakes, which run a re-run synchronously and end it as the test says; waiting is recorded, never
slept."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from ci_agent.config import Settings, TriageSettings
from ci_agent.engine.forge import Forge, render_marker
from ci_agent.engine.marker import ForgeState
from ci_agent.engine.marker_entries import MAX_FLAKY, FlakyRecord, RerunRecord
from ci_agent.engine.triage_flaky import FlakyCheck, Wait, check_flaky, quarantine_candidates
from ci_agent.report import Outcome, Report, ReportFailure, SourceInfo, TestCounts
from tests.fakes.github_fake import GitHubFake, Reply, error
from tests.fakes.gitlab_fake import FakeJob, Fault, GitLabFake
from tests.fakes.gitlab_fake import error as error_gitlab
from tests.forge.forges import GITLAB_JOB_TOKEN, bare_origin, github_forge, gitlab_forge

SETTINGS = Settings()
TEST_A = "tests/test_cart.py::test_total"
TEST_B = "tests/test_cart.py::test_discount"


def report(*names: str) -> Report:
    failures = tuple(ReportFailure(n, Outcome.FAILED, "assert 1 == 2", (), None, None) for n in names)
    return Report((SourceInfo("junit.xml", "junit", 1),), (), TestCounts(len(names), 0, len(names), 0),
                  failures, (), 1, 0)


@dataclass
class Clock:
    """A clock that moves only when the check sleeps: every pause is recorded."""

    now: float = 0.0
    sleeps: list[float] = field(default_factory=list)

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds

    def wait(self) -> Wait:
        return Wait(sleep=self.sleep, clock=lambda: self.now)


@dataclass
class Ci:
    """One forge with one failed run, and the forge-side knobs a test turns."""

    forge: Forge
    run_id: int
    ends: Callable[[str], None]  # how the next re-run ends: failure, success, queued
    finish: Callable[[str], None]  # a queued re-run finishes so
    reruns_asked: Callable[[], int]  # re-run requests the forge received


def github_ci(fake: GitHubFake) -> Ci:
    fake.add_run(7, [("test", "failure"), ("lint", "success")])

    def ends(how: str) -> None:
        fake.rerun_ends = how
    return Ci(github_forge(fake), 7, ends, lambda how: fake.finish_rerun(7, how),
              lambda: len(fake.requests_to("POST", r".*/actions/runs/7/rerun-failed-jobs")))


def gitlab_ci(fake: GitLabFake, token: str | None = None) -> Ci:
    run = fake.add_pipeline("main", "a" * 40, "failed", [FakeJob("test", "failed", b"FAILED test_total\n"),
                                                          FakeJob("lint", "success", b"ok\n")])

    def ends(how: str) -> None:
        fake.rerun_ends = how
    forge = gitlab_forge(fake, token) if token else gitlab_forge(fake)
    return Ci(forge, run, ends, lambda how: fake.finish_retries(run, how),
              lambda: len(fake.requests_to("POST", r".*/jobs/\d+/retry")))


@pytest.fixture(params=["github", "gitlab"])
def ci(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Ci]:
    if request.param == "github":
        with GitHubFake() as github:
            yield github_ci(github)
        assert github.failures == []
        return
    with GitLabFake(bare_origin(tmp_path)[0]) as gitlab:
        yield gitlab_ci(gitlab)
    assert gitlab.failures == []


def check(ci: Ci, marker: ForgeState, failed: Report | None = None, *, clock: Clock | None = None,
          settings: Settings = SETTINGS) -> FlakyCheck:
    return check_flaky(ci.forge, ci.run_id, failed or report(TEST_A, TEST_B), settings, marker,
                       (clock or Clock()).wait())


# -- the four outcomes -----------------------------------------------------------------------

def test_a_rerun_that_passes_is_flaky_and_names_the_failed_tests(ci: Ci) -> None:
    ci.ends("success")

    result = check(ci, ForgeState())

    assert result.outcome == "flaky" and not result.again
    assert result.verdict is not None and result.verdict.kind == "flaky"
    assert result.verdict.tests == (TEST_A, TEST_B)
    assert f"run {ci.run_id} again (attempt 2)" in result.verdict.reason
    assert result.marker.reruns[str(ci.run_id)] == RerunRecord("flaky", 2, (TEST_A, TEST_B))
    assert {t: r.count for t, r in result.marker.flaky.items()} == {TEST_A: 1, TEST_B: 1}
    assert ci.reruns_asked() >= 1


def test_a_rerun_that_fails_again_is_real_and_records_no_flake(ci: Ci) -> None:
    result = check(ci, ForgeState())  # the fakes' default: it fails the same way

    assert (result.outcome, result.verdict, result.note) == ("real", None, "")
    assert result.marker.reruns[str(ci.run_id)].state == "real"
    assert result.marker.flaky == {}


def test_a_rerun_still_queued_at_the_timeout_is_pending_with_growing_pauses(ci: Ci) -> None:
    ci.ends("queued")
    clock = Clock()
    settings = Settings(triage=TriageSettings(rerun_timeout_s=300))

    result = check(ci, ForgeState(), clock=clock, settings=settings)

    assert result.outcome == "pending" and result.verdict is None
    assert "again (attempt 2, queued)" in result.note
    assert result.marker.reruns[str(ci.run_id)] == RerunRecord("pending", 2, (TEST_A, TEST_B))
    assert clock.sleeps[:4] == [15.0, 22.5, 33.75, 50.625]
    assert all(b >= a for a, b in zip(clock.sleeps, clock.sleeps[1:-1], strict=False))
    assert max(clock.sleeps) <= 120.0 and sum(clock.sleeps) == 300.0


def test_the_reruns_completion_concludes_a_pending_check_without_asking_again(ci: Ci) -> None:
    ci.ends("queued")
    pending = check(ci, ForgeState(), settings=Settings(triage=TriageSettings(rerun_timeout_s=60)))
    asked = ci.reruns_asked()
    ci.finish("success")

    # the re-run's own completion event: its report is the passing attempt's, without failures
    done = check(ci, pending.marker, report())

    assert done.outcome == "flaky" and not done.again
    assert done.verdict is not None and done.verdict.tests == (TEST_A, TEST_B)
    assert ci.reruns_asked() == asked
    assert done.marker.flaky[TEST_A].count == 1


def test_a_concluded_run_is_answered_from_the_marker(ci: Ci) -> None:
    ci.ends("success")
    first = check(ci, ForgeState())
    asked = ci.reruns_asked()

    again = check(ci, first.marker)

    assert again.outcome == "flaky" and again.again
    assert again.verdict == first.verdict
    assert again.marker.flaky == first.marker.flaky  # counted once per run
    assert ci.reruns_asked() == asked


def test_flaky_checks_off_ask_nothing(ci: Ci) -> None:
    result = check(ci, ForgeState(), settings=Settings(triage=TriageSettings(flaky=False)))

    assert result.outcome == "unavailable" and "triage.flaky: false" in result.note
    assert result.marker == ForgeState() and ci.reruns_asked() == 0


# -- refusals never block a fix --------------------------------------------------------------

def test_github_refusing_a_run_still_running_is_unavailable_once() -> None:
    with GitHubFake() as fake:
        ci = github_ci(fake)
        fake.runs[7].status = "in_progress"

        first = check(ci, ForgeState())
        again = check(ci, first.marker)

    assert first.outcome == "unavailable" and "still running" in first.note
    assert first.marker.reruns["7"].state == "unavailable"
    assert again.outcome == "unavailable" and again.again and again.note == first.note
    assert ci.reruns_asked() == 1
    assert fake.failures == []


def test_a_gitlab_job_token_is_unavailable_and_says_which_token(tmp_path: Path) -> None:
    with GitLabFake(bare_origin(tmp_path)[0]) as fake:
        result = check(gitlab_ci(fake, GITLAB_JOB_TOKEN), ForgeState())

    assert result.outcome == "unavailable"
    assert result.note.startswith("CI could not run the failed jobs again: CI_JOB_TOKEN cannot retry")
    assert "CI_AGENT_GITLAB_TOKEN" in result.note and "\n" not in result.note


def test_a_retry_refused_part_way_is_never_flaky(tmp_path: Path) -> None:
    with GitLabFake(bare_origin(tmp_path)[0]) as fake:
        run = fake.add_pipeline("main", "a" * 40, "failed",
                                [FakeJob("unit", "failed"), FakeJob("e2e", "failed")])
        fake.rerun_ends = "success"
        fake.add_fault(Fault(error_gitlab(403, "403 Forbidden - Job is not retryable"),
                             path=r".*/retry", method="POST", skip=1))
        ci = Ci(gitlab_forge(fake), run, lambda how: None, lambda how: None, lambda: 0)

        result = check(ci, ForgeState())

    assert result.outcome == "unavailable" and "not retryable" in result.note
    assert result.verdict is None and result.marker.flaky == {}


def test_a_forge_that_accepts_but_starts_no_rerun_is_not_waited_for() -> None:
    """A completed run still at its old attempt after one pause never started the re-run."""
    with GitHubFake() as fake:
        ci = github_ci(fake)
        fake.inject(Reply(201, {}), path=r".*/rerun-failed-jobs", method="POST")  # and does nothing
        clock = Clock()

        result = check(ci, ForgeState(), clock=clock)

    assert result.outcome == "unavailable" and "still at attempt 1" in result.note
    assert clock.sleeps == [15.0]
    assert result.marker.reruns["7"].state == "unavailable"


def test_a_cancelled_rerun_tells_nothing() -> None:
    with GitHubFake() as fake:
        ci = github_ci(fake)
        fake.rerun_ends = "queued"
        pending = check(ci, ForgeState(), settings=Settings(triage=TriageSettings(rerun_timeout_s=1)))
        fake.finish_rerun(7, "cancelled")
        result = check(ci, pending.marker)

    assert result.outcome == "unavailable" and result.note == "The re-run of the failed jobs ended cancelled."
    assert result.marker.flaky == {}


def test_a_run_state_that_cannot_be_read_leaves_the_check_pending() -> None:
    with GitHubFake() as fake:
        ci = github_ci(fake)
        # the re-run reads the run first (let through), the wait then cannot
        fake.inject(error(404, "Not Found"), path=r".*/actions/runs/7", method="GET", skip=1)

        result = check(ci, ForgeState())

    assert result.outcome == "pending" and result.note.startswith("Could not read the re-run of run 7")
    assert result.marker.reruns["7"].state == "pending"


# -- flakiness per test, quarantine ----------------------------------------------------------

def test_a_test_flaky_quarantine_after_times_is_a_candidate(ci: Ci) -> None:
    ci.ends("success")
    before = ForgeState(flaky={TEST_A: FlakyRecord(1, ("5",))})

    result = check(ci, before, report(TEST_A, TEST_B))

    assert result.marker.flaky[TEST_A] == FlakyRecord(2, ("5", str(ci.run_id)))
    assert result.quarantine == (TEST_A,)
    assert quarantine_candidates(result.marker, 2) == (TEST_A,)
    assert quarantine_candidates(result.marker, 1) == (TEST_A, TEST_B)  # most often flaky first
    assert quarantine_candidates(result.marker, 0) == ()


def test_hostile_test_names_are_bounded_in_the_marker(ci: Ci) -> None:
    ci.ends("success")
    names = [f"test_{i}_" + "-->" * 2000 for i in range(30)]

    result = check(ci, ForgeState(), report(*names))

    assert result.verdict is not None and len(result.verdict.tests) == 5
    assert all(len(t) <= 120 for t in result.marker.flaky)
    assert len(render_marker(result.marker.to_json())) < 8000  # the marker stays small


# -- the marker's records --------------------------------------------------------------------

def test_records_round_trip_and_an_empty_marker_has_none() -> None:
    state = ForgeState(reruns={"7": RerunRecord("flaky", 2, (TEST_A,))},
                       flaky={TEST_A: FlakyRecord(3, ("5", "6", "7"))})

    assert ForgeState.from_json(state.to_json()) == state
    assert "reruns" not in ForgeState().to_json() and "flaky" not in ForgeState().to_json()


def test_hand_edited_records_lose_only_what_they_broke() -> None:
    data = {**ForgeState().to_json(),
            "reruns": {"7": {"state": "flaky", "attempt": 2, "tests": [TEST_A, 3], "note": ""},
                       "8": {"state": "maybe", "attempt": 2, "tests": [], "note": ""},
                       "9": {"state": "real", "attempt": -1, "tests": [], "note": ""},
                       "10": "pending"},
            "flaky": {TEST_A: {"n": 2, "runs": ["7", 8, "x" * 500]}, TEST_B: {"n": True},
                      "t": {"n": 1.5}}}

    state = ForgeState.from_json(data)

    assert state.reruns == {"7": RerunRecord("flaky", 2, (TEST_A,))}
    assert state.flaky == {TEST_A: FlakyRecord(2, ("7",))}
    assert ForgeState.from_json({**data, "reruns": [1], "flaky": "x"}).reruns == {}


def test_merging_keeps_a_conclusion_and_adds_both_jobs_flakes() -> None:
    base = ForgeState(flaky={TEST_A: FlakyRecord(1, ("5",))})
    theirs = base.with_rerun("7", RerunRecord("flaky", 2, (TEST_A,))).with_flaky((TEST_A,), "7")
    ours = base.with_rerun("7", RerunRecord("pending", 2, (TEST_A,))).with_rerun(
        "8", RerunRecord("flaky", 2, (TEST_A,))).with_flaky((TEST_A,), "8")

    merged = ours.merged_with(theirs)

    assert merged.reruns["7"].state == "flaky"  # their conclusion stands over our pending
    assert merged.reruns["8"].state == "flaky"
    assert merged.flaky[TEST_A] == FlakyRecord(3, ("5", "7", "8"))
    assert merged.merged_with(merged) == merged


def test_a_run_counts_once_per_test() -> None:
    state = ForgeState().with_flaky((TEST_A, TEST_A), "7").with_flaky((TEST_A,), "7")

    assert state.flaky[TEST_A] == FlakyRecord(1, ("7",))


def test_records_are_bounded_keeping_the_newest() -> None:
    state = ForgeState()
    for run in range(1, 80):
        state = state.with_flaky((f"test_{run}",), str(run)).with_rerun(str(run), RerunRecord("real", 2))

    assert len(state.flaky) == MAX_FLAKY and "test_79" in state.flaky and "test_1" not in state.flaky
    assert sorted(map(int, state.reruns)) == list(range(60, 80))
