"""`dry_run: true` in the GitLab include (issue 13, point 5): the job stops before the model call
and prints the request it would send (system text, the user turn, the tools) and its size in
bytes and estimated tokens; nothing is sent, pushed or posted. The printed request is checked
against what the same job without `dry_run` sends to the Anthropic fake.
"""

from __future__ import annotations

import re

from ci_agent.engine.dry_run import request_bytes
from tests.gitlab_scenarios.harness import API_KEY, World
from tests.gitlab_scenarios.steps import answer, model_calls
from tests.scenarios import model_scripts as model


def test_a_dry_run_prints_the_request_a_real_run_sends(world: World) -> None:
    world.include["dry_run"] = True
    red = world.pipeline("main")

    dry = world.job(red)

    assert dry.exit_code == 0 and dry.outcome == "skipped", str(dry)
    assert model_calls(world) == 0 and world.origin_branches() == ["main"]
    assert [r for r in world.gitlab.requests if r.method != "GET"] == [], "nothing written"
    size = re.search(r"^ci-agent: dry run: the request is (\d+) bytes, about (\d+) tokens \(estimated\)",
                     dry.stdout, re.M)
    assert size, dry.stdout
    assert f"the request is {size.group(1)} bytes" in dry.summary, "the size is in the summary too"
    assert API_KEY not in dry.stdout + dry.stderr + dry.summary

    world.include["dry_run"] = False
    answer(world, "broken", "fix")
    real = world.job(red)

    assert real.exit_code == 0, str(real)
    sent = world.api.message_requests[0]
    system = "\n\n".join(b["text"] for b in sent["system"])
    user = model.first_user_text(sent)
    assert "test_no_ratings_yet" in user
    want = f"--- system ---\n{system}\n\n--- user ---\n{user}\n"
    assert want in dry.stdout, "exactly what was sent"
    assert "--- tools: read_file, search_code, list_files, submit_patch, give_up ---" in dry.stdout
    assert abs(int(size.group(1)) - request_bytes(sent)) <= 64
