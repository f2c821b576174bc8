"""The relay's HTTP side: a server whose connections cannot pin it.

`http.server.ThreadingHTTPServer` starts one thread per connection and waits on each read for
its socket timeout, so a client that opens many connections and sends nothing (or one header
byte every few seconds, "slowloris") holds as many threads as it likes for as long as it likes.
Here every connection runs in a fixed pool of `workers` threads; when all are busy a new
connection is answered 503 and closed at once, never queued. Each request has deadlines that
count the whole phase, not one read: the request line and headers (also how long a kept-alive
connection may sit idle), then the body, then writing the answer. A connection that misses one
is cut off with one log line.

A client that hangs up (mid-headers, mid-body, before the answer is written) is one quiet log
line: no traceback, nothing on stderr but that line. A connection closed before its first byte
(a TCP health check) is not logged at all.
"""

from __future__ import annotations

import io
import json
import re
import socket
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any, Protocol

MAX_BODY = 1024 * 1024
_BUSY = (b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nContent-Length: 18\r\n"
         b"Retry-After: 1\r\nConnection: close\r\n\r\n{\"error\": \"busy\"}\n")
_HUNG_UP = (ConnectionError, TimeoutError, OSError)


@dataclass(frozen=True)
class ConnectionLimits:
    """How many connections are served at once, and how long each phase of a request may take.
    GitLab sends a webhook (at most 1 MiB here) in one go and waits at most 10 s for the answer."""

    workers: int = 16
    header_s: float = 10.0
    body_s: float = 10.0
    write_s: float = 10.0


class Receiver(Protocol):
    """What the handler asks of the relay (`ci_agent.relay.Relay`)."""

    def token_ok(self, given: str | None) -> bool: ...

    def receive(self, event: str, payload: dict[str, Any]) -> tuple[int, dict[str, Any], str]: ...

    def log(self, line: str) -> None: ...


def printable(text: str, limit: int = 100) -> str:
    return re.sub(r"[^\x20-\x7e]", "?", text)[:limit]


class _DeadlineReader(io.RawIOBase):
    """The socket's read side; every read waits only for what is left of `deadline` (monotonic)."""

    def __init__(self, sock: socket.socket) -> None:
        super().__init__()
        self._sock = sock
        self.deadline = time.monotonic()

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("deadline passed")
        self._sock.settimeout(left)
        return self._sock.recv_into(buffer)


class _DeadlineWriter(io.RawIOBase):
    """The socket's write side; each write may wait `limit_s` for a client that reads nothing."""

    def __init__(self, sock: socket.socket, limit_s: float) -> None:
        super().__init__()
        self._sock, self._limit_s = sock, limit_s

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        self._sock.settimeout(self._limit_s)
        self._sock.sendall(data)
        return len(data)


class BoundedHTTPServer(HTTPServer):
    """`HTTPServer` with a fixed pool of connection threads; a connection beyond it gets 503."""

    def __init__(self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler],
                 limits: ConnectionLimits, log: Callable[[str], None]) -> None:
        super().__init__(address, handler)
        self.limits, self.log = limits, log
        self._slots = threading.BoundedSemaphore(max(1, limits.workers))
        self._pool = ThreadPoolExecutor(max_workers=max(1, limits.workers),
                                        thread_name_prefix="ci-agent-relay-conn")

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self._slots.acquire(blocking=False):
            self._refuse(request, client_address)
            return
        try:
            self._pool.submit(self._serve, request, client_address)
        except RuntimeError:  # the pool is shut down: the server is stopping
            self._slots.release()
            self.shutdown_request(request)

    def _serve(self, request: Any, client_address: Any) -> None:
        try:
            self.finish_request(request, client_address)
        except _HUNG_UP as error:
            self.log(f"{_peer(client_address)}: connection lost ({error.__class__.__name__})")
        except Exception:
            self.handle_error(request, client_address)
        finally:
            self.shutdown_request(request)
            self._slots.release()

    def _refuse(self, request: socket.socket, client_address: Any) -> None:
        """Answer 503 without reading or waiting: the accept loop must never block on a client."""
        try:
            request.setblocking(False)
            request.send(_BUSY)
        except OSError:
            pass
        self.shutdown_request(request)
        self.log(f"{_peer(client_address)}: 503 busy ({self.limits.workers} connections open)")

    def server_close(self) -> None:
        super().server_close()
        self._pool.shutdown(wait=False, cancel_futures=True)


def _peer(client_address: Any) -> str:
    return printable(str(client_address[0]) if isinstance(client_address, tuple) else "client", 60)


def handler_for(receiver: Receiver, limits: ConnectionLimits) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "ci-agent-relay"
        sys_version = ""

        def setup(self) -> None:
            super().setup()
            self.rfile.close()  # the standard file object: ours reads with deadlines
            self._reader = _DeadlineReader(self.connection)
            self.rfile = io.BufferedReader(self._reader)
            self.wfile = _DeadlineWriter(self.connection, limits.write_s)  # type: ignore[assignment]
            self._said = False  # the one log line of this request is written

        def handle(self) -> None:
            try:
                super().handle()
            except _HUNG_UP as error:
                self.close_connection = True
                self._say(f"{_peer(self.client_address)}: connection lost ({error.__class__.__name__})")

        def handle_one_request(self) -> None:
            self._reader.deadline = time.monotonic() + limits.header_s
            self._said = False
            super().handle_one_request()  # a TimeoutError here is reported through log_error

        def log_message(self, format: str, *args: Any) -> None:
            pass  # one line of our own per request instead

        def log_error(self, format: str, *args: Any) -> None:
            """The standard library's own refusals (bad request line, headers too long, a timeout
            while reading them): one line, in our words."""
            text = format % args if args else format
            if "timed out" in text:
                text = f"no complete request within {limits.header_s:g} s: closed"
            self._say(f"{_peer(self.client_address)}: {printable(text, 120)}")

        def _say(self, line: str) -> None:
            if not self._said:
                self._said = True
                receiver.log(line)

        def _answer(self, status: int, body: Mapping[str, Any], outcome: str) -> None:
            data = json.dumps(body).encode()
            event = printable(self.headers.get("X-Gitlab-Event") or "-", 40)
            line = f"{self.command} {printable(self.path, 60)} {event}: {status} {outcome}"
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                if self.close_connection:
                    self.send_header("Connection", "close")
                self.end_headers()
                self.wfile.write(data)
            except _HUNG_UP as error:
                self.close_connection = True
                line += f" (the client hung up before the answer was sent: {error.__class__.__name__})"
            self._say(line)

        def do_GET(self) -> None:
            if self.path.split("?")[0] == "/healthz":
                self._answer(200, {"ok": True}, "health")
            else:
                self._answer(404, {"error": "not found"}, "not found")

        def do_POST(self) -> None:
            if not receiver.token_ok(self.headers.get("X-Gitlab-Token")):
                self.close_connection = True  # the body stays unread
                self._answer(401, {"error": "wrong or missing X-Gitlab-Token"}, "bad token")
                return
            body = self._body()
            if body is None:
                return
            try:
                payload = json.loads(body)
            except (ValueError, RecursionError):  # too deep to read is not JSON we accept
                payload = None
            if not isinstance(payload, dict):
                self._answer(400, {"error": "the body is not a JSON object"}, "bad JSON")
                return
            status, answer, outcome = receiver.receive(self.headers.get("X-Gitlab-Event") or "", payload)
            self._answer(status, answer, outcome)

        def _body(self) -> bytes | None:
            if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
                self.close_connection = True
                self._answer(411, {"error": "a Content-Length is required"}, "no length")
                return None
            try:
                length = int(self.headers.get("Content-Length") or "0")
            except ValueError:
                length = -1
            if length < 0:
                self.close_connection = True
                self._answer(400, {"error": "bad Content-Length"}, "bad length")
                return None
            if length > MAX_BODY:
                self.close_connection = True
                self._answer(413, {"error": f"the body is larger than {MAX_BODY} bytes"}, "too big")
                return None
            self._reader.deadline = time.monotonic() + limits.body_s
            try:
                data = self.rfile.read(length)
            except TimeoutError:
                self.close_connection = True
                self._answer(408, {"error": f"the body did not arrive within {limits.body_s:g} s"},
                             "body too slow: cut off")
                return None
            except _HUNG_UP as error:
                data, why = b"", error.__class__.__name__
            else:
                why = "closed"
            if len(data) < length:
                self.close_connection = True
                self._say(f"{self.command} {printable(self.path, 60)}: the client hung up after "
                          f"{len(data)} of {length} body bytes ({why})")
                return None
            return data

    return Handler
