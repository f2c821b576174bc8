"""Transport faults the loopback fakes inject (issue 8, service faults): what a server or the
network does to a request besides answering it with an HTTP error.

- `drop`: the connection is closed once the request was read, with no response at all; the
  request never reached the service (a load balancer reset it), so nothing happened there.
- `partial`: the request is served (its effect happens), the status line and headers go out
  with the full `content-length`, then half the body, then the connection closes.
- `timeout`: the request is served (its effect happens) but the answer is held longer than the
  client waits (`hold_s`, a few seconds at most; only this request's daemon thread sleeps, so
  the fake keeps serving others and nothing waits for a held answer at shutdown).

The last two are the hard cases for a client: the write landed and the client cannot know it.
HTTP error replies (429 storms, 5xx, 529) stay each fake's own canned `Reply`/`Fault`.
"""

from __future__ import annotations

import contextlib
import re
import socket
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from typing import Any, Protocol

DROP, PARTIAL, TIMEOUT = "drop", "partial", "timeout"
TRANSPORT_KINDS = (DROP, PARTIAL, TIMEOUT)
DEFAULT_HOLD_S = 3.0


@dataclass(frozen=True)
class Broken:
    """What a fake's dispatch returns instead of a clean answer: the transport fault `kind`, and
    for `partial`/`timeout` the answer the service produced (`status`, `headers`, `data`)."""

    kind: str
    status: int = 0
    headers: tuple[tuple[str, str], ...] = ()
    data: bytes = b""
    hold_s: float = DEFAULT_HOLD_S

    def __post_init__(self) -> None:
        if self.kind not in TRANSPORT_KINDS:
            raise ValueError(f"transport fault {self.kind!r}: one of {', '.join(TRANSPORT_KINDS)}")


class Aimed(Protocol):
    """A fault of a fake (an HTTP error or a transport fault) aimed at requests."""

    path: str  # a regex searched in the request path
    method: str | None  # None: any method
    times: int  # how many more requests it hits
    skip: int  # how many matching requests it lets through first


def hits(fault: Aimed, method: str, path: str) -> bool:
    """Whether `fault` hits this request, counting it down: the next `times` requests matching
    `method` and `path`, after letting `skip` of them through."""
    if fault.times <= 0 or fault.method not in (None, method) or not re.search(fault.path, path):
        return False
    if fault.skip > 0:
        fault.skip -= 1
        return False
    fault.times -= 1
    return True


def send_broken(handler: BaseHTTPRequestHandler, broken: Broken) -> None:
    """Carry out `broken` on the handler's connection; the connection is closed afterwards."""
    handler.close_connection = True
    try:
        if broken.kind == DROP:
            _hang_up(handler)
            return
        if broken.kind == TIMEOUT:
            time.sleep(broken.hold_s)  # longer than the client's timeout: it has gone
        _send_head(handler, broken)
        body = broken.data if broken.kind == TIMEOUT else broken.data[: len(broken.data) // 2]
        handler.wfile.write(body)
        handler.wfile.flush()
    except OSError:
        pass  # the client gave up first, which is the point
    _hang_up(handler)


def _send_head(handler: BaseHTTPRequestHandler, broken: Broken) -> None:
    handler.send_response(broken.status)
    names = {k.lower() for k, _ in broken.headers}
    if "content-type" not in names:
        handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(broken.data)))
    for key, value in broken.headers:
        if key.lower() != "content-length":
            handler.send_header(key, value)
    handler.end_headers()


def _hang_up(handler: BaseHTTPRequestHandler) -> None:
    connection: Any = handler.connection
    with contextlib.suppress(OSError):
        connection.shutdown(socket.SHUT_RDWR)
    connection.close()
