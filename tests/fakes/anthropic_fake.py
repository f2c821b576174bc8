"""A loopback fake of the Anthropic Messages API for the real SDK to talk to.

stdlib `http.server` on 127.0.0.1, port 0, in a thread. A route table (unknown routes answer
404 and are recorded as test failures), every request recorded, replies scripted as a queue
(or a callable), faults injectable: 429 with `retry-after`, 529, 500, dropped connections, queued
as replies or injected by count (`inject`: the next `times` valid requests after `skip`), also as
transport faults (tests/fakes/breakage.py: dropped, half the JSON, held past the client's timeout).
An injected fault never consumes a scripted reply (the half JSON is the next reply's, peeked).

Requests are validated strictly, the way the real API answers (400 invalid_request_error):
roles alternate starting with user; tool_use only from the assistant, tool_result only from
the user, first in the turn, answering exactly the previous assistant turn's tool_use ids; at
most 4 `cache_control` breakpoints; `model` and `max_tokens` present; an API key present (else
401): `x-api-key`, or `Authorization: Bearer`, which is how anthropic 2.x sends `api_key`;
extended thinking's rules (budget, tool_choice, thinking blocks sent back unchanged:
tests/fakes/anthropic_thinking.py, whose `thinking` / `redacted_thinking` blocks a reply may
carry). A request that fails validation never consumes a scripted reply. With `prompt_cache`
set, usage reports cache reads and writes as the API's prompt cache would
(tests/fakes/prompt_cache.py). A request offering `submit_review` is the adversarial reviewer's:
it is answered from the review queue (`review(...)`), by default an approval
(tests/fakes/anthropic_review.py), and `message_requests` leaves it out (`review_requests`).
"""

from __future__ import annotations

import itertools
import json
import re
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tests.fakes import breakage
from tests.fakes.anthropic_review import default_review, is_review_request
from tests.fakes.anthropic_thinking import misscripted, validate_thinking
from tests.fakes.anthropic_thinking import redacted_thinking as redacted_thinking  # for the tests
from tests.fakes.anthropic_thinking import thinking as thinking
from tests.fakes.breakage import DEFAULT_HOLD_S, Broken, hits, send_broken
from tests.fakes.loopback import Loopback, QuietHandler, Served
from tests.fakes.prompt_cache import PromptCache

MESSAGES = "/v1/messages"
MAX_CACHE_BREAKPOINTS = 4
_TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,128}$")
_TOP_LEVEL = {"model", "max_tokens", "messages", "system", "tools", "tool_choice", "metadata",
              "stop_sequences", "temperature", "top_p", "top_k", "stream", "thinking",
              "service_tier", "cache_control", "output_config"}
_BLOCK_TYPES = {"text", "image", "document", "tool_use", "tool_result", "thinking",
                "redacted_thinking"}


@dataclass(frozen=True)
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: Any  # parsed JSON, or the raw text when it was not JSON


@dataclass(frozen=True)
class Fault:
    """An HTTP error reply: status, Anthropic error type and message, extra headers."""

    status: int
    error_type: str
    message: str
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Injected:
    """The next `times` valid requests matching `method` and the `path` regex, after `skip` of
    them, get `fault` (an HTTP error) or the transport fault `transport` instead of a reply."""

    fault: Fault | None = None
    transport: str | None = None
    times: int = 1
    skip: int = 0
    path: str = ".*"
    method: str | None = None
    hold_s: float = DEFAULT_HOLD_S

    def take(self, method: str, path: str) -> bool:
        return hits(self, method, path)


class _Drop:
    """Close the connection after reading the request, without answering."""


DROP = _Drop()
Reply = dict[str, Any] | Fault | _Drop
Script = Callable[[dict[str, Any]], Reply]


def rate_limited(retry_after: str | None = "1", *, ms: str | None = None) -> Fault:
    headers = {} if retry_after is None else {"retry-after": retry_after}
    if ms is not None:
        headers["retry-after-ms"] = ms
    return Fault(429, "rate_limit_error", "Number of request tokens has exceeded your per-minute "
                 "rate limit", headers)


def overloaded() -> Fault:
    return Fault(529, "overloaded_error", "Overloaded")


def server_error() -> Fault:
    return Fault(500, "api_error", "Internal server error")


_ids = itertools.count(1)


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def tool_use(name: str, input: dict[str, Any], id: str | None = None) -> dict[str, Any]:
    return {"type": "tool_use", "id": id or f"toolu_{next(_ids):06d}", "name": name, "input": input}


def message(*content: dict[str, Any], stop_reason: str | None = None,
            usage: dict[str, int] | None = None) -> dict[str, Any]:
    """A response body; `model` is filled from the request, `stop_reason` from the content."""
    if stop_reason is None:
        stop_reason = "tool_use" if any(b["type"] == "tool_use" for b in content) else "end_turn"
    return {
        "id": f"msg_{next(_ids):06d}", "type": "message", "role": "assistant",
        "content": list(content), "stop_reason": stop_reason, "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 5, "cache_creation_input_tokens": 0,
                  "cache_read_input_tokens": 0, **(usage or {})},
    }


def _count_cache_control(node: Any) -> int:
    if isinstance(node, dict):
        own = 1 if node.get("cache_control") is not None else 0
        return own + sum(_count_cache_control(v) for k, v in node.items() if k != "cache_control")
    if isinstance(node, list):
        return sum(_count_cache_control(v) for v in node)
    return 0


def _blocks(content: Any, where: str) -> list[dict[str, Any]]:
    if isinstance(content, str):
        if not content:
            raise ValueError(f"{where}: text content blocks must be non-empty")
        return [{"type": "text", "text": content}]
    if not isinstance(content, list) or not content:
        raise ValueError(f"{where}.content: must be a string or a non-empty list of blocks")
    for j, block in enumerate(content):
        if not isinstance(block, dict) or block.get("type") not in _BLOCK_TYPES:
            raise ValueError(f"{where}.content.{j}: unknown content block type")
        if block["type"] == "text" and not (isinstance(block.get("text"), str) and block["text"]):
            raise ValueError(f"{where}.content.{j}: text content blocks must be non-empty")
    return content


def _validate_tools(body: dict[str, Any]) -> set[str]:
    tools = body.get("tools", [])
    if not isinstance(tools, list):
        raise ValueError("tools: Input should be a valid list")
    names: set[str] = set()
    for i, tool in enumerate(tools):
        name = tool.get("name") if isinstance(tool, dict) else None
        if not isinstance(name, str) or not _TOOL_NAME.match(name):
            raise ValueError(f"tools.{i}.name: String should match pattern '{_TOOL_NAME.pattern}'")
        if name in names:
            raise ValueError("tools: Tool names must be unique.")
        schema = tool.get("input_schema")
        if not isinstance(schema, dict) or schema.get("type") != "object":
            raise ValueError(f"tools.{i}.input_schema.type: Input should be 'object'")
        names.add(name)
    choice = body.get("tool_choice")
    if choice is not None:
        if not isinstance(choice, dict) or choice.get("type") not in {"auto", "any", "tool", "none"}:
            raise ValueError("tool_choice.type: Input should be 'auto', 'any', 'tool' or 'none'")
        if choice["type"] == "tool" and choice.get("name") not in names:
            raise ValueError("tool_choice.name: Tool not found in tools")
    return names


def _validate_messages(messages: Any, tool_names: set[str]) -> None:
    if not isinstance(messages, list) or not messages:
        raise ValueError("messages: at least one message is required")
    pending: set[str] = set()  # tool_use ids of the previous assistant turn
    seen: set[str] = set()
    for i, msg in enumerate(messages):
        where = f"messages.{i}"
        role = msg.get("role") if isinstance(msg, dict) else None
        expected = "user" if i % 2 == 0 else "assistant"
        if role != expected:
            raise ValueError(f"{where}.role: roles must alternate between \"user\" and "
                             f"\"assistant\", starting with \"user\" (expected {expected!r})")
        blocks = _blocks(msg.get("content"), where)
        results = [b for b in blocks if b["type"] == "tool_result"]
        if role == "user":
            leading = list(itertools.takewhile(lambda b: b["type"] == "tool_result", blocks))
            if len(leading) != len(results):
                raise ValueError(f"{where}: tool_result blocks must come first in the message")
            answered = [b.get("tool_use_id") for b in results]
            for tid in answered:
                if tid not in pending:
                    raise ValueError(f"{where}.content: unexpected `tool_use_id` found in "
                                     f"`tool_result` blocks: {tid}. Each `tool_result` block must "
                                     "have a corresponding `tool_use` block in the previous message.")
            if set(answered) != pending or len(answered) != len(set(answered)):
                raise ValueError(f"{where}: `tool_use` ids were found without `tool_result` blocks "
                                 f"immediately after: {sorted(pending - set(answered))}")
            pending = set()
        else:
            if results:
                raise ValueError(f"{where}: tool_result blocks are only allowed in user messages")
            for b in blocks:
                if b["type"] != "tool_use":
                    continue
                tid, name = b.get("id"), b.get("name")
                if not isinstance(tid, str) or tid in seen:
                    raise ValueError(f"{where}: `tool_use` ids must be unique")
                if not tool_names or not isinstance(name, str):
                    raise ValueError(f"{where}: requests with `tool_use` blocks must define `tools`")
                if not isinstance(b.get("input"), dict):
                    raise ValueError(f"{where}: tool_use.input must be an object")
                seen.add(tid)
                pending.add(tid)
    if pending:
        raise ValueError("the last message has `tool_use` blocks; send their `tool_result` first")
    if messages[-1]["role"] != "user":
        # A final assistant turn is a prefill; we never send one, so the fake refuses it.
        raise ValueError("the final message must be a user message")


def validate(body: Any) -> str | None:
    """The 400 invalid_request_error message the real API would give, or None if valid."""
    if not isinstance(body, dict):
        return "The request body must be a JSON object."
    try:
        extra = sorted(set(body) - _TOP_LEVEL)
        if extra:
            raise ValueError(f"{extra[0]}: Extra inputs are not permitted")
        if not isinstance(body.get("model"), str) or not body["model"]:
            raise ValueError("model: Field required")
        max_tokens = body.get("max_tokens")
        if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 0:
            raise ValueError("max_tokens: Field required")
        system = body.get("system")
        if system is not None and not isinstance(system, str):
            for j, block in enumerate(system if isinstance(system, list) else [None]):
                if not isinstance(block, dict) or block.get("type") != "text" or not block.get("text"):
                    raise ValueError(f"system.{j}: system blocks must be non-empty text blocks")
        for_cc = _count_cache_control(body)
        if for_cc > MAX_CACHE_BREAKPOINTS:
            raise ValueError(f"A maximum of {MAX_CACHE_BREAKPOINTS} blocks with cache_control may "
                             f"be provided. Found {for_cc}.")
        _validate_messages(body.get("messages"), _validate_tools(body))
        validate_thinking(body)
    except ValueError as error:
        return str(error)
    return None


class AnthropicFake(Served):
    """Use as a context manager (or via the `anthropic_fake` fixture)."""

    def __init__(self) -> None:
        self.requests: list[Recorded] = []
        self.failures: list[str] = []  # unexpected routes and script underruns: fail the test
        self._script: deque[Reply | Script] = deque()
        self._default: Script | None = None
        self._reviews: deque[Reply | Script] = deque()  # the reviewer's answers, in order
        self.injected: list[Injected] = []
        # opt-in: usage's input and cache figures as the API's prompt cache gives them
        self.prompt_cache: PromptCache | None = None
        self._lock = threading.Lock()
        self._routes: dict[tuple[str, str], Callable[[Recorded], tuple[int, dict[str, str], Any]
                                                     | _Drop | Broken]] = {
            ("POST", MESSAGES): self._messages,
        }
        self._loopback = Loopback(_handler_for(self))
        self._loopbacks = (self._loopback,)

    @property
    def base_url(self) -> str:
        return self._loopback.url

    def reply(self, *replies: Reply | Script) -> None:
        """Queue replies, used in order, one per valid request."""
        with self._lock:
            self._script.extend(replies)

    def inject(self, fault: Fault | str, *, times: int = 1, skip: int = 0, path: str = ".*",
               method: str | None = None, hold_s: float = DEFAULT_HOLD_S) -> None:
        """`fault` (an HTTP error, or breakage.DROP / PARTIAL / TIMEOUT) for the next `times`
        valid requests after `skip` of them; the scripted replies wait meanwhile."""
        if isinstance(fault, str):
            Broken(fault)  # refuses an unknown kind now, not in the server thread
        injected = (Injected(transport=fault, times=times, skip=skip, path=path, method=method, hold_s=hold_s)
                    if isinstance(fault, str) else
                    Injected(fault=fault, times=times, skip=skip, path=path, method=method))
        with self._lock:
            self.injected.append(injected)

    def review(self, *replies: Reply | Script) -> None:
        """Queue the reviewer's answers (tests/fakes/anthropic_review.py builds them); once they
        are used up the reviewer approves."""
        with self._lock:
            self._reviews.extend(replies)

    def reply_always(self, script: Script) -> None:
        """Answer every valid request left once the queue is empty."""
        self._default = script

    @property
    def all_message_requests(self) -> list[dict[str, Any]]:
        return [r.body for r in self.requests if r.path == MESSAGES and isinstance(r.body, dict)]

    @property
    def message_requests(self) -> list[dict[str, Any]]:
        """The fixer's requests (the reviewer's are `review_requests`)."""
        return [b for b in self.all_message_requests if not is_review_request(b)]

    @property
    def review_requests(self) -> list[dict[str, Any]]:
        return [b for b in self.all_message_requests if is_review_request(b)]

    def dispatch(self, recorded: Recorded) -> tuple[int, dict[str, str], Any] | _Drop | Broken:
        with self._lock:
            self.requests.append(recorded)
        route = self._routes.get((recorded.method, recorded.path.split("?", 1)[0]))
        if route is None:
            self.failures.append(f"unexpected request {recorded.method} {recorded.path}")
            return 404, {}, _error_body("not_found_error", f"No route {recorded.path}")
        return route(recorded)

    def _messages(self, recorded: Recorded) -> tuple[int, dict[str, str], Any] | _Drop | Broken:
        if not api_key_of(recorded.headers):
            return 401, {}, _error_body("authentication_error", "x-api-key header is required")
        if not recorded.headers.get("anthropic-version"):
            return 400, {}, _error_body("invalid_request_error",
                                        "anthropic-version: header is required")
        problem = validate(recorded.body)
        if problem is not None:
            return 400, {}, _error_body("invalid_request_error", problem)
        with self._lock:
            hit = next((i for i in self.injected if i.take(recorded.method, recorded.path)), None)
        if hit is not None:
            return self._injected(hit, recorded.body)
        reply = self._next(recorded.body)
        if isinstance(reply, _Drop):
            return reply
        if isinstance(reply, Fault):
            return reply.status, reply.headers, _error_body(reply.error_type, reply.message)
        wrong = misscripted(recorded.body, reply)
        if wrong:
            self.failures.append(wrong)
        # the reviewer's request sets no cache breakpoint: its scripted usage stands
        if self.prompt_cache is not None and not is_review_request(recorded.body):
            reply = {**reply, "usage": {**reply.get("usage", {}), **self.prompt_cache.usage(recorded.body)}}
        return 200, {}, {"model": recorded.body["model"], **reply}

    def _injected(self, hit: Injected, body: dict[str, Any]) -> tuple[int, dict[str, str], Any] | Broken:
        if hit.fault is not None:
            return hit.fault.status, hit.fault.headers, _error_body(hit.fault.error_type, hit.fault.message)
        assert hit.transport is not None
        if hit.transport == breakage.DROP:
            return Broken(breakage.DROP)
        status, payload = 200, self._peek(body)
        if payload is None:
            status, payload = 500, _error_body("api_error", "Internal server error")
        data = json.dumps(payload).encode()
        return Broken(hit.transport, status, (("request-id", "req_fake_broken"),), data, hit.hold_s)

    def _peek(self, body: dict[str, Any]) -> dict[str, Any] | None:
        """The answer the next request would get, without taking it from the script."""
        item: Reply | Script | None
        with self._lock:
            if is_review_request(body):
                item = self._reviews[0] if self._reviews else default_review
            else:
                item = self._script[0] if self._script else self._default
        reply = item(body) if callable(item) else item
        return {"model": body["model"], **reply} if isinstance(reply, dict) else None

    def _next(self, body: dict[str, Any]) -> Reply:
        item: Reply | Script | None
        with self._lock:
            if is_review_request(body):
                item = self._reviews.popleft() if self._reviews else default_review
            else:
                item = self._script.popleft() if self._script else self._default
        if item is None:
            self.failures.append("a request arrived but no reply was scripted")
            return server_error()
        return item(body) if callable(item) else item


def api_key_of(headers: dict[str, str]) -> str:
    """The key a request carries: `x-api-key`, or `Authorization: Bearer` (anthropic 2.x sends
    its api_key that way), else ""."""
    bearer = headers.get("authorization", "")
    return headers.get("x-api-key") or (bearer[7:] if bearer.lower().startswith("bearer ") else "")


def _error_body(error_type: str, message_text: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": error_type, "message": message_text}}


def _handler_for(fake: AnthropicFake) -> type[QuietHandler]:
    class Handler(QuietHandler):
        def _handle(self) -> None:
            result = fake.dispatch(Recorded(self.command, self.path, self.lower_headers(), self.read_body()))
            if isinstance(result, Broken):
                send_broken(self, result)
                return
            if isinstance(result, _Drop):
                self.close_connection = True
                self.connection.close()
                return
            status, extra, payload = result
            data = json.dumps(payload).encode()
            self.send_reply(status, [("content-type", "application/json"), ("content-length", str(len(data))),
                                     ("request-id", f"req_fake_{len(fake.requests)}"), *extra.items()], data)

        do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = _handle

    return Handler
