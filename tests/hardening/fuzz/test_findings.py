"""What the fuzzing campaign found, one test per finding, written as ci-agent should behave.

Each input is the smallest shape of what `bench/fuzz.py` (or triage of its findings) reported; the
campaign's own inputs are larger (the mutators nest, repeat and splice). While a finding is open
its test is `xfail(strict=True)`: the day the code is fixed the test passes, strict makes that an
error, and the marker is removed; the comment above each test keeps what was found where.
"""

from __future__ import annotations

import json
import math
import socket
import threading
from pathlib import Path

import pytest

from ci_agent.config import PatchSettings
from ci_agent.engine.forge import parse_marker
from ci_agent.engine.marker import ForgeState
from ci_agent.errors import UsageError
from ci_agent.patch.engine import apply_patch, review
from ci_agent.platforms.github.env import github_context
from ci_agent.platforms.gitlab.env import gitlab_context, gitlab_trigger
from ci_agent.relay import Relay
from tests.hardening.fuzz import corpus
from tests.hardening.fuzz.targets_forge import SECRET, http_request

DEEP = "[" * 100_000  # any nesting deeper than the interpreter's recursion limit (1000)


# Found: forge/base.py:215 parse_marker catches ValueError only; json.loads raises RecursionError on deep
# nesting. Fixed in a00a568.
def test_a_deeply_nested_marker_is_no_marker() -> None:
    assert parse_marker('<!-- ci-agent:v1 {"a":' + "[" * 5000 + "} -->\nbody") is None


# Found: forge_state.py:137 iterates data['resets'] (`or []`) without checking it is a list: a number there
# raises TypeError. Fixed in a00a568.
def test_a_marker_whose_resets_is_a_number_loses_only_that_field() -> None:
    state = ForgeState.from_json({"v": 1, "resets": 5, "fix_branch": "ci-agent/fix/x"})
    assert state.resets == ()
    assert state.fix_branch == "ci-agent/fix/x"


# Found: forge_state.py:147 iterates data['tried'] (`or []`) without checking it is a list: a number there
# raises TypeError. Fixed in a00a568.
def test_a_marker_whose_tried_is_a_number_loses_only_that_field() -> None:
    state = ForgeState.from_json({"v": 1, "tried": 1.5, "tokens": 7})
    assert state.tried == ()
    assert state.tokens == 7


# Found: forge_state.py:151 float(x) of a JSON integer beyond 1e308 raises OverflowError. Fixed in a00a568.
def test_a_marker_with_a_huge_command_time_loses_only_that_value() -> None:
    state = ForgeState.from_json({"v": 1, "command_times": [10**400, 2.0]})
    assert state.command_times == (2.0,)


# Found: forge_state.py:151 keeps non-finite command times (JSON Infinity): five of them make the rate limit
# of slash/gate.py refuse every command forever. Fixed in a00a568.
def test_a_marker_with_infinite_command_times_does_not_block_commands() -> None:
    state = ForgeState.from_json({"v": 1, "command_times": [math.inf] * 5 + [math.nan]})
    assert state.command_times == ()


# Found: forge_state.py:146 and :48 take JSON true for an integer (bool is an int): tokens/n become True,
# while handled and command_times already drop booleans. Fixed in a00a568.
def test_a_marker_with_boolean_numbers_loses_those_fields() -> None:
    tried = {"n": True, "head": "", "fp": "", "after": "", "run": "", "summary": ""}
    state = ForgeState.from_json({"v": 1, "tokens": True, "tried": [tried]})
    assert state.tokens == 0
    assert state.tried == ()


# Found: cienv.py:158 load_event catches ValueError only; json.loads raises RecursionError on a deeply
# nested payload (a traceback, not a usage error). Fixed in a00a568.
def test_a_deeply_nested_event_payload_is_a_usage_error(tmp_path: Path) -> None:
    event = tmp_path / "event.json"
    event.write_text(DEEP)
    with pytest.raises(UsageError):
        github_context({"GITHUB_REPOSITORY": "o/r", "GITHUB_EVENT_NAME": "push",
                        "GITHUB_EVENT_PATH": str(event)})


def _gitlab_env(**extra: str) -> dict[str, str]:
    return {"CI_SERVER_URL": "https://gitlab.example.com", "CI_PROJECT_PATH": "group/app",
            "CI_PROJECT_ID": "5", "CI_PIPELINE_ID": "9", "CI_COMMIT_SHA": "f" * 40,
            "CI_COMMIT_REF_NAME": "feature/x", **extra}


# Found: cienv_gitlab.py:99 str.isdigit() accepts digits int() refuses (superscripts, over 4300 digits):
# ValueError. Fixed in a00a568.
@pytest.mark.parametrize("iid", ["²", "9" * 4301], ids=["superscript-two", "4301-digits"])
def test_a_merge_request_iid_that_is_no_number_is_not_a_crash(iid: str) -> None:
    found = gitlab_trigger(gitlab_context(_gitlab_env(CI_MERGE_REQUEST_IID=iid)))
    assert found.pr_number is None


# Found: cienv_gitlab.py:71 urllib.parse.urlparse raises ValueError ('Invalid IPv6 URL') for an unbalanced
# '[': a traceback, not the usage error. Fixed in a00a568.
def test_a_server_url_with_a_bracket_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="CI_SERVER_URL"):
        gitlab_context(_gitlab_env(CI_SERVER_URL="https://gitlab[.example.com"))


def _post(relay: Relay, raw: bytes) -> bytes:
    with socket.create_connection(relay.address, timeout=15) as sock:
        sock.sendall(raw)
        sock.shutdown(socket.SHUT_WR)
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


# Found: relay.py:250 catches ValueError only; json.loads raises RecursionError: the handler thread dies,
# the sender gets no answer, a traceback on stderr (the token must be right to get there). Fixed in a00a568.
def test_the_relay_answers_400_to_a_deeply_nested_body() -> None:
    errors: list[str] = []
    relay = Relay(SECRET, lambda _c: 1, port=0, log=lambda _line: None)
    relay.server.handle_error = lambda *_a: errors.append("handler raised")  # type: ignore[method-assign]
    threading.Thread(target=relay.serve_forever, daemon=True).start()
    try:
        answer = _post(relay, http_request(DEEP.encode()))
    finally:
        relay.shutdown()
    assert errors == []
    assert answer.startswith(b"HTTP/1.1 400")
    assert json.loads(answer.split(b"\r\n\r\n", 1)[1]) == {"error": "the body is not a JSON object"}


# --- the patch pipeline: a path segment longer than the file system allows ---------------------------

LONG = "y" * 300  # NAME_MAX is 255 bytes on Linux file systems


def _long_name_repo(tmp_path: Path) -> Path:
    return corpus.make_repo(tmp_path / "repo")


def test_review_rejects_a_path_segment_longer_than_the_file_system_allows(tmp_path: Path) -> None:
    repo = _long_name_repo(tmp_path)
    name = f"README.md{LONG}"
    verdict = review(f"--- a/{name}\n+++ b/{name}\n@@ -1 +1 @@\n-a\n+b\n", repo, PatchSettings())
    assert not verdict.ok
    assert verdict.rejections


def test_apply_patch_of_an_unwritable_long_name_is_a_rejection(tmp_path: Path) -> None:
    repo = _long_name_repo(tmp_path)
    before = corpus.tree_state(repo)
    name = f"src/{LONG}.py"
    verdict = apply_patch(f"--- /dev/null\n+++ b/{name}\n@@ -0,0 +1 @@\n+x = 1\n", repo, PatchSettings())
    assert not verdict.ok
    assert corpus.tree_state(repo) == before
    assert not (repo / "src").exists()
