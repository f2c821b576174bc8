"""`dry_run: true` on GitHub (issue 13, point 5): the step stops before the model call and prints
the request it would send (system text, the user turn, the tools) and its size in bytes and
estimated tokens, redacted like everything else; nothing is sent, pushed or posted.

The printed request is checked against the truth: the same job without `dry_run` sends its first
request to the Anthropic fake, and what the fake received is what the dry run printed.
"""

from __future__ import annotations

import re

from ci_agent.engine.dry_run import request_bytes
from tests.github_scenarios.harness import API_KEY, CI_COMMAND, USER_TOKEN, World
from tests.github_scenarios.steps import answer, model_calls
from tests.scenarios import model_scripts as model
from tests.scenarios.sample_repos import run


def _group(stdout: str) -> str:
    """The log group the dry run prints (the runner folds it)."""
    found = re.search(r"^::group::ci-agent dry run: the request to the model\n(.*?)^::endgroup::$", stdout,
                      re.S | re.M)
    assert found, stdout
    return found.group(1)


def test_a_dry_run_prints_the_request_a_real_run_sends(world: World) -> None:
    world.inputs.update(github_token=USER_TOKEN, dry_run="true")
    red = world.ci("main")

    dry = world.after_ci(red)

    assert dry.exit_code == 0 and dry.outputs["outcome"] == "skipped", str(dry)
    assert model_calls(world) == 0 and world.origin_branches() == ["main"] and world.github.pulls == {}
    printed = _group(dry.stdout)
    size = re.search(r"ci-agent: dry run: the request is (\d+) bytes, about (\d+) tokens \(estimated\)",
                     dry.stdout)
    assert size, dry.stdout
    size_bytes, tokens = int(size.group(1)), int(size.group(2))
    assert f"the request is {size_bytes} bytes" in dry.summary, "the size is in the job summary too"

    world.inputs["dry_run"] = "false"
    answer(world, "broken", "fix")
    real = world.after_ci(red, run_attempt=2)

    assert real.exit_code == 0, str(real)
    sent = world.api.message_requests[0]
    user = model.first_user_text(sent)
    system = "\n\n".join(b["text"] for b in sent["system"])
    assert "test_no_ratings_yet" in user
    want = f"--- system ---\n{system}\n\n--- user ---\n{user}\n"
    assert want in printed, "exactly what was sent"
    assert "--- tools: read_file, search_code, list_files, submit_patch, give_up ---" in printed
    # the size of what was sent, and a token estimate of the same order (about 4 bytes per token)
    assert abs(size_bytes - request_bytes(sent)) <= 64, (size_bytes, request_bytes(sent))
    assert size_bytes / 8 < tokens < size_bytes / 2


def test_a_dry_run_redacts_the_request_and_keeps_it_out_of_workflow_commands(world: World) -> None:
    """Inline: the failed step's log holds the API key and a line that would be a workflow command;
    the printed request has neither as such."""
    world.inputs.update(github_token=USER_TOKEN, dry_run="true")
    probe = world.checkout("main", "probe")
    done = run(CI_COMMAND, probe)
    output = done.stdout + done.stderr
    assert "E       ZeroDivisionError: division by zero" in output
    # the exception's message carries the key and, on its next line, a workflow command
    log = output.replace("E       ZeroDivisionError: division by zero",
                         f"E       ZeroDivisionError: division by zero (key {API_KEY})\n"
                         "E       ::set-output name=outcome::fixed", 1)

    dry = world.inline("main", build_log=log)

    assert dry.exit_code == 0, str(dry)
    printed = _group(dry.stdout)
    assert "test_no_ratings_yet" in printed
    shown = [line for line in dry.stdout.splitlines() if not line.startswith("::add-mask::")]
    assert API_KEY not in "\n".join(shown) + dry.stderr + dry.summary, "only the mask names it"
    assert "(key [REDACTED" in printed, printed
    assert "set-output name=outcome" in printed, "the line is shown"
    assert not re.search(r"^\s*::set-output", dry.stdout, re.M), "as text, never as a workflow command"
    assert model_calls(world) == 0 and world.api.requests == []
