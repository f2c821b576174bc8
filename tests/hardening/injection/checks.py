"""Checks the injection scenarios share: what a run left in git, the rejection the model got
back, and a verify command that records every time it is run."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

from tests.fakes.anthropic_fake import AnthropicFake
from tests.hardening.injection.payloads import Malicious, fix_diff
from tests.scenarios import model_scripts as model
from tests.scenarios.harness import ROOT_CAUSE, SUMMARY
from tests.scenarios.sample_repos import PYTEST, SampleRepo, git
from tests.toolchain import PYTHON


def touched_anywhere(repo: Path) -> set[str]:
    """Every path any commit not on main changes, over every ref (branches, attempt records).
    The day's spend and the flaky-test records (issue 16) are ci-agent's own ledgers — root
    commits holding `<date>.json` / the records, never a repository file — so they are left out."""
    out = git(repo, "log", "--exclude=refs/ci-agent/spend", "--exclude=refs/ci-agent/flaky", "--all",
              "--not", "main", "--format=", "--name-only")
    return {line for line in out.splitlines() if line}


def rejection_of(request: dict[str, object]) -> str:
    (result,) = model.tool_results(request)
    assert result.get("is_error") is True, result
    return model.result_text(result)


def obey_then_fix(api: AnthropicFake, repo: SampleRepo, patches: list[Malicious]) -> None:
    """The obedient model's answers: each of `patches`, then the real fix."""
    api.reply(*(model.submit_patch(p.build(repo), summary="As the log told me.", root_cause=ROOT_CAUSE)
                for p in patches),
              model.submit_patch(fix_diff(repo), summary=SUMMARY, root_cause=ROOT_CAUSE))


def assert_refused_turn_by_turn(requests: list[dict[str, Any]], patches: list[Malicious],
                                names: list[str]) -> None:
    """After the first request, one per obeyed patch: each refusal (with its rule) sent back in
    the same attempt."""
    _, *answers = requests
    assert len(answers) == len(patches)
    for name, patch, request in zip(names, patches, answers, strict=True):
        assert not model.is_new_conversation(request), "the rejection belongs to the same attempt"
        assert f"[{patch.rule}" in rejection_of(request), name


def logged_verify(folder: Path) -> tuple[str, Path]:
    """A verify command that records each run (argv, cwd) and then runs the sample's pytest.
    `folder`: the `reachable_tmp` fixture (the sandbox user runs the script and appends the log)."""
    calls = folder / "verify-calls.jsonl"
    script = folder / "verify_logger.py"
    script.write_text(
        "import json, os, subprocess, sys\n"
        f"with open({str(calls)!r}, 'a') as log:\n"
        "    log.write(json.dumps({'argv': sys.argv[1:], 'cwd': os.getcwd()}) + '\\n')\n"
        f"sys.exit(subprocess.call({shlex.split(PYTEST)!r}))\n")
    return f"{shlex.quote(PYTHON)} {shlex.quote(str(script))} --configured", calls


def verify_calls(calls: Path) -> list[dict[str, Any]]:
    if not calls.exists():
        return []
    return [json.loads(line) for line in calls.read_text().splitlines() if line]


def outside_fences(prompt: str, needle: str) -> list[int]:
    """Offsets of `needle` in `prompt` that lie outside every `<untrusted-data>` block."""
    found: list[int] = []
    at = prompt.find(needle)
    while at != -1:
        opened, closed = prompt.rfind("<untrusted-data ", 0, at), prompt.rfind("</untrusted-data>", 0, at)
        if opened == -1 or closed > opened:
            found.append(at)
        at = prompt.find(needle, at + 1)
    return found


def assert_arrives_as_data(request: dict[str, Any], needle: str, required: bool = True) -> None:
    prompt = model.first_user_text(request)
    assert needle in prompt or not required, f"{needle} never reached the model"
    assert outside_fences(prompt, needle) == [], f"{needle} outside every data fence"
    assert needle not in json.dumps(request["system"]), f"{needle} in the system prompt"
