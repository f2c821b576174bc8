"""The loopback HTTP server the fakes (Anthropic, GitHub, GitLab) run on: one threaded server on
127.0.0.1 at a free port, served from a daemon thread, and a request handler that reads a body,
writes a reply and stays quiet. What each fake answers, and with which headers, stays its own."""

from __future__ import annotations

import json
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

POLL_S = 0.02  # how often serve_forever looks for the shutdown request


class _Server(ThreadingHTTPServer):
    daemon_threads = True  # idle keep-alive connections must not hold the test up

    def handle_error(self, request: Any, client_address: Any) -> None:
        # The client went away (a timeout test, a dropped connection). Printing a traceback from
        # this thread is not just noise: on CPython 3.11 traceback carets call ast.parse, and a
        # concurrent ast.parse in pytest's thread can then fail with a SystemError.
        pass


class Loopback:
    """One server for `handler`; `start` serves it in a daemon thread, `stop` ends both."""

    def __init__(self, handler: type[BaseHTTPRequestHandler]) -> None:
        self.server = _Server(("127.0.0.1", 0), handler)
        self._thread = threading.Thread(target=self.server.serve_forever, args=(POLL_S,), daemon=True)

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self._thread.join(timeout=5)


class Served:
    """A fake served on its loopback servers (`_loopbacks`) while used as a context manager."""

    _loopbacks: tuple[Loopback, ...]

    def __enter__(self) -> Self:
        for loopback in self._loopbacks:
            loopback.start()
        return self

    def __exit__(self, *exc: object) -> None:
        for loopback in self._loopbacks:
            loopback.stop()


class QuietHandler(BaseHTTPRequestHandler):
    """HTTP/1.1 keep-alive, no access log; helpers to read a request and write a reply."""

    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # quiet test output
        pass

    def lower_headers(self) -> dict[str, str]:
        return {k.lower(): v for k, v in self.headers.items()}

    def read_body(self, *, form: bool = False) -> Any:
        """The request body: JSON, its text when it is not JSON, None when empty; with `form`, a
        form-encoded body (`application/x-www-form-urlencoded`) as a dict."""
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        if form and "application/x-www-form-urlencoded" in (self.headers.get("content-type") or ""):
            return dict(urllib.parse.parse_qsl(raw.decode("utf-8", "replace")))
        try:
            return json.loads(raw) if raw else None
        except ValueError:
            return raw.decode("utf-8", "replace")

    def send_reply(self, status: int, headers: list[tuple[str, str]], data: bytes) -> None:
        """The status line, `headers` in order, then `data`; a client that stopped waiting for it
        (a timeout test) only closes the connection."""
        self.send_response(status)
        for key, value in headers:
            self.send_header(key, value)
        self.end_headers()
        try:
            self.wfile.write(data)
        except OSError:
            self.close_connection = True
