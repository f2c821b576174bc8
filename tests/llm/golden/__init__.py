"""The first request to the model, one stored file per platform, compared byte for byte; and the
user turn of later attempts (later_attempts.md, tests/llm/test_prompt.py), which no first
request shows.

The platform files are what the dry run prints: `fix --local --dry-run` prints the whole Messages API
body as JSON; `dry_run: true` on GitHub and GitLab prints the request as a person reads it
(system text, user turn, tool names); the rest of the body (model, tool schemas, cache
breakpoints) comes from the same `llm.first_request` the local file pins whole. Whoever changes a
prompt template, a tool schema or the context changes these files on purpose:

    CI_AGENT_UPDATE_GOLDEN=1 python -m pytest tests/llm/test_golden_requests_*.py tests/llm/test_prompt.py

then reads `git diff tests/llm/golden/` before committing it: that diff is the change the model sees.
"""

from __future__ import annotations

import difflib
import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from ci_agent.cli.main import main

GOLDEN = Path(__file__).resolve().parent
TEMPLATES = Path(__file__).resolve().parents[3] / "ci_agent" / "templates"
UPDATE_ENV = "CI_AGENT_UPDATE_GOLDEN"
# Read once at import: the scenario fixtures clear every CI_AGENT_* variable before a test runs.
UPDATING = os.environ.get(UPDATE_ENV) == "1"


# The sizes a report names for its inputs, and the request size the dry run prints: the sample's
# pytest log holds its temp folder's path and its JUnit file the host name and timings, so their
# sizes (and, through the digits, the request's) differ from one machine to the next (a CI clone's
# temp folder was 22 bytes longer than the one these files were written on).
_INPUT_SIZE = re.compile(r"\((\w+), \d+ bytes\)")
_REQUEST_SIZE = re.compile(r"the request is \d+ bytes, about \d+ tokens")


def normalise(text: str, tmp: Path, failing_commit: str, parent_commit: str) -> str:
    """What varies between two runs of the same scenario, and only that: the ids of the sample's
    two commits (git stamps them with the time they were made, so they differ on every run; the
    request names them shortened to 12 digits), the pytest temp folder (a path a tool printed),
    and the sizes that depend on the machine (above)."""
    for commit, name in ((failing_commit, "<failing-commit>"), (parent_commit, "<parent-commit>")):
        text = re.sub(rf"\b{commit[:12]}[0-9a-f]{{0,28}}\b", name, text)
    text = _INPUT_SIZE.sub(r"(\1, <size> bytes)", text)
    text = _REQUEST_SIZE.sub("the request is <size> bytes, about <n> tokens", text)
    return text.replace(str(tmp), "<tmp>")


def assert_golden(name: str, text: str) -> None:
    """`text` equals the stored `name`; with CI_AGENT_UPDATE_GOLDEN=1 it becomes the stored one."""
    path = GOLDEN / name
    if UPDATING:
        path.write_bytes(text.encode("utf-8"))
        return
    assert path.exists(), f"no golden {path}; create it with {UPDATE_ENV}=1"
    want = path.read_bytes().decode("utf-8")
    if text != want:
        diff = "".join(difflib.unified_diff(want.splitlines(True), text.splitlines(True),
                                            f"golden/{name}", "this run"))
        raise AssertionError(f"the first request changed; if on purpose, rerun with {UPDATE_ENV}=1 "
                             f"and review the diff:\n{diff}")


def printed_parts(printed: str) -> tuple[str, str, list[str]]:
    """(system text, user text, tool names) of a request as a CI dry run prints it."""
    found = re.search(r"^--- system ---\n(.*?)\n\n--- user ---\n(.*?)\n\n--- tools: (.*?) ---$", printed,
                      re.S | re.M)
    assert found, printed
    return found.group(1), found.group(2), found.group(3).split(", ")


def body_parts(request: dict[str, Any]) -> tuple[str, str, list[str]]:
    """(system text, user text, tool names) of a Messages API body."""
    system = "\n\n".join(block["text"] for block in request["system"])
    (turn,) = request["messages"]
    user = "\n\n".join(block["text"] for block in turn["content"])
    return system, user, [tool["name"] for tool in request["tools"]]


def distilled_failures(capfd: pytest.CaptureFixture[str], folder: Path, log: str, *results: Path) -> str:
    """The failed-tests section of `ci-agent distill` run on the CI's log and test results (what
    the fix job reads too), as the model reads it."""
    path = folder / "golden-facts.log"
    path.write_text(log, encoding="utf-8")
    capfd.readouterr()
    assert main(["distill", str(path), *map(str, results)]) == 0
    text = capfd.readouterr().out
    assert "FAILED TESTS" in text, text
    return text[text.index("FAILED TESTS"):].rstrip("\n")


def assert_facts(parts: tuple[str, str, list[str]], failures: str) -> None:
    """Facts checked against the sources, so that a golden is not just output copied back: the
    system text is the system template's, the tools are the tool schemas', the user turn holds
    the failure report as `ci-agent distill` renders the same log."""
    system, user, tools = parts
    first_line = (TEMPLATES / "system.md.j2").read_text(encoding="utf-8").splitlines()[0]
    assert system.startswith(first_line + "\n"), system[:200]
    schemas = json.loads((TEMPLATES / "tools.json").read_text(encoding="utf-8"))
    assert tools == [tool["name"] for tool in schemas]
    assert user.startswith("## Failure report\n")
    assert failures in user, (failures, user)
