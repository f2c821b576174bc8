"""Inputs are named as a person knows them on GitLab too (issue 13 point 15): the fix merge
request's description and the model's `inputs:` line show `job log <id>-<job>.log` and
`artifact <job>/<path>`, never the job's temp download folder."""

from __future__ import annotations

import re

from tests.gitlab_scenarios.harness import World
from tests.gitlab_scenarios.steps import answer, assert_fix_mr_outputs
from tests.scenarios import model_scripts as model

TEMP = re.compile(r"/tmp/|ci-agent-cycle-|ci-agent-wt")


def test_the_mr_description_and_the_prompt_name_fetched_inputs_without_temp_paths(world: World) -> None:
    answer(world, "broken", "fix")
    red = world.pipeline("main")

    run = world.job(red)

    assert run.exit_code == 0, str(run)
    mr = assert_fix_mr_outputs(world, run, "committed", attempt=1)
    prompt = model.first_user_text(world.api.message_requests[0])
    (inputs_line,) = [line for line in prompt.splitlines() if line.startswith("inputs: ")]
    assert f"job log {red.job_id}-test.log (" in inputs_line, inputs_line
    assert re.search(r"artifact \S+/test-results/junit\.xml \(junit", inputs_line), inputs_line
    for text in (prompt, mr["description"], run.summary):
        assert not TEMP.search(text), TEMP.search(text)
        assert str(world.tmp) not in text
    assert f"job log {red.job_id}-test.log" in mr["description"]
    assert "no file matches" not in run.stderr and "no test-result file" not in run.stderr, run.stderr
