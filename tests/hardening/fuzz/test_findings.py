"""What the fuzzing campaign found, one test per finding, written as ci-agent should behave.

Each input is the smallest shape of what `bench/fuzz.py` reported (the campaign's own inputs are
larger: the mutators nest, repeat and splice). While a finding is open its test is
`xfail(strict=True)`: the day the code is fixed the test passes, strict makes that an error, and
the marker is removed.
"""

from __future__ import annotations

import json
import socket
import threading
from pathlib import Path

import pytest

from ci_agent.cienv import github_context
from ci_agent.cienv_gitlab import gitlab_context, gitlab_trigger
from ci_agent.errors import UsageError
from ci_agent.forge.base import parse_marker
from ci_agent.forge_state import ForgeState
from ci_agent.relay import Relay
from tests.hardening.fuzz.targets_forge import SECRET, http_request

DEEP = "[" * 100_000  # any nesting deeper than the interpreter's recursion limit (1000)


@pytest.mark.xfail(strict=True, reason="forge/base.py:215 parse_marker catches ValueError only; "
                   "json.loads raises RecursionError on deep nesting")
def test_a_deeply_nested_marker_is_no_marker() -> None:
    assert parse_marker('<!-- ci-agent:v1 {"a":' + "[" * 5000 + "} -->\nbody") is None


@pytest.mark.xfail(strict=True, reason="forge_state.py:137 iterates data['resets'] (`or []`) without "
                   "checking it is a list: a number there raises TypeError")
def test_a_marker_whose_resets_is_a_number_loses_only_that_field() -> None:
    state = ForgeState.from_json({"v": 1, "resets": 5, "fix_branch": "ci-agent/fix/x"})
    assert state.resets == ()
    assert state.fix_branch == "ci-agent/fix/x"


@pytest.mark.xfail(strict=True, reason="forge_state.py:147 iterates data['tried'] (`or []`) without "
                   "checking it is a list: a number there raises TypeError")
def test_a_marker_whose_tried_is_a_number_loses_only_that_field() -> None:
    state = ForgeState.from_json({"v": 1, "tried": 1.5, "tokens": 7})
    assert state.tried == ()
    assert state.tokens == 7


@pytest.mark.xfail(strict=True, reason="forge_state.py:151 float(x) of a JSON integer beyond 1e308 raises "
                   "OverflowError")
def test_a_marker_with_a_huge_command_time_loses_only_that_value() -> None:
    state = ForgeState.from_json({"v": 1, "command_times": [10**400, 2.0]})
    assert state.command_times == (2.0,)


@pytest.mark.xfail(strict=True, reason="cienv.py:158 load_event catches ValueError only; json.loads "
                   "raises RecursionError on a deeply nested payload (a traceback, not a usage error)")
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


@pytest.mark.xfail(strict=True, reason="cienv_gitlab.py:99 str.isdigit() accepts digits int() refuses "
                   "(superscripts, over 4300 digits): ValueError")
@pytest.mark.parametrize("iid", ["²", "9" * 4301], ids=["superscript-two", "4301-digits"])
def test_a_merge_request_iid_that_is_no_number_is_not_a_crash(iid: str) -> None:
    found = gitlab_trigger(gitlab_context(_gitlab_env(CI_MERGE_REQUEST_IID=iid)))
    assert found.pr_number is None


@pytest.mark.xfail(strict=True, reason="cienv_gitlab.py:71 urllib.parse.urlparse raises ValueError "
                   "('Invalid IPv6 URL') for an unbalanced '[': a traceback, not the usage error")
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


@pytest.mark.xfail(strict=True, reason="relay.py:250 catches ValueError only; json.loads raises "
                   "RecursionError: the handler thread dies, the sender gets no answer, a traceback on "
                   "stderr (the token must be right to get there)")
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
