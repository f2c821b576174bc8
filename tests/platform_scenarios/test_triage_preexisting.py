"""A failure the default branch has too is not this change's (issue 16, `pre_existing`), on GitHub
and GitLab: a person's request whose CI fails only the way `main`'s latest run already fails gets no
model call, no fix branch, and a status comment saying so; a new failure beside the old one still
gets its attempt, and the model is told which failure was already red on `main`."""

from __future__ import annotations

from ci_agent.engine.forge import parse_marker
from tests.platform_scenarios.base import push_file
from tests.platform_scenarios.platforms import Platform, the_status_note
from tests.platform_scenarios.steps import model_calls

FEATURE = "feature/stars"
FEATURE_FIX = "ci-agent/fix/feature/stars"
OLD_TEST = "test_no_ratings_yet"  # the sample's failure: red on main already
NEW_TEST = "test_stars_are_counted"
NEW_FAILURE = f"def {NEW_TEST}():\n    assert len('***') == 4\n"


def test_a_failure_red_on_main_too_gets_no_patch(platform: Platform) -> None:
    main = platform.ci("main")
    assert platform.failed(main)
    push_file(platform.repo, FEATURE, "docs/stars.md", "Stars are coming.\n", new_branch=True)
    source = platform.open_person_request(FEATURE)
    red = platform.request_ci(FEATURE, source)
    assert platform.failed(red)

    run = platform.job(red)

    assert run.exit_code == 0, str(run)
    assert run.outcome == "pre_existing", str(run)
    assert "pre_existing" in run.outputs["verdict"]  # GitHub: the verdict's JSON; GitLab: its kind
    assert model_calls(platform) == 0, "no model call for a failure this change did not cause"
    assert platform.world.origin_tip(FEATURE_FIX) is None, "no fix branch"
    assert platform.requests_from(FEATURE_FIX) == []
    note = the_status_note(platform, source)
    said = next(line for line in note["body"].splitlines() if "also fail on main" in line)
    assert said.startswith("All 2 failures here also fail on main (its latest "), said
    assert said.endswith("this change did not cause them"), said
    assert f"test_ratings.{OLD_TEST}" in note["body"]
    marker = parse_marker(note["body"])
    assert marker is not None and list(marker["runs"].values()) == ["pre_existing"], "a rerun changes nothing"


def test_a_new_failure_while_main_is_red_with_another_gets_its_attempt(platform: Platform) -> None:
    assert platform.failed(platform.ci("main"))
    push_file(platform.repo, FEATURE, "tests/test_stars.py", NEW_FAILURE, new_branch=True)
    source = platform.open_person_request(FEATURE)
    red = platform.request_ci(FEATURE, source)

    run = platform.job(red)

    assert run.outcome == "gave_up", str(run)  # the script's answer: the attempt was made
    assert model_calls(platform) == 1, "the new failure is this change's: the attempt goes on"
    request = str(platform.api.message_requests[0]["messages"])
    assert NEW_TEST in request and OLD_TEST in request
    body = the_status_note(platform, source)["body"]
    said = next(line for line in body.splitlines() if "also fail on main" in line)
    assert said.startswith("2 of 3 failures also fail on main (its latest "), said
    assert OLD_TEST in said and NEW_TEST not in said, said
