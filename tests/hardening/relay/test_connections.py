"""The relay's connections cannot pin it (issue 12, "the relay serves only what it was told"):
real sockets on loopback against an in-process `Relay` with small limits (a pool of 4, deadlines
of a fraction of a second) so the attacks finish fast. Every loop is bounded by a count and a
time; the bounds are for a broken test, never timing claims beyond "cut off, not kept forever"."""

from __future__ import annotations

import contextlib
import http.client
import json
import socket
import struct
import threading
import time
from collections.abc import Iterator

import pytest

from ci_agent.relay import NoteCommand, Relay
from ci_agent.relay_http import ConnectionLimits
from tests.gitlab.test_relay import note_hook

SECRET = "relay-connections-secret-0123456789"
LIMITS = ConnectionLimits(workers=4, header_s=0.6, body_s=0.6, write_s=0.6)
WAIT_S = 20  # a bound for a broken test


class Live:
    def __init__(self, relay: Relay) -> None:
        self.relay = relay
        self.lines: list[str] = []
        self.started: list[NoteCommand] = []

    def connect(self) -> socket.socket:
        sock = socket.create_connection(self.relay.address, timeout=WAIT_S)
        return sock

    def webhook(self, note_id: int, timeout: float = WAIT_S) -> int:
        host, port = self.relay.address
        connection = http.client.HTTPConnection(host, port, timeout=timeout)
        try:
            connection.request("POST", "/hook", body=json.dumps(note_hook(note_id=note_id)).encode(),
                               headers={"X-Gitlab-Token": SECRET, "X-Gitlab-Event": "Note Hook",
                                        "Content-Type": "application/json"})
            response = connection.getresponse()
            response.read()
            return response.status
        finally:
            connection.close()

    def threads(self) -> int:
        return threading.active_count()


@pytest.fixture
def live() -> Iterator[Live]:
    holder: list[Live] = []

    def start(command: NoteCommand) -> int:
        holder[0].started.append(command)
        return len(holder[0].started)
    relay = Relay(SECRET, start, port=0, log=lambda line: holder[0].lines.append(line), limits=LIMITS)
    holder.append(Live(relay))
    thread = threading.Thread(target=relay.serve_forever, daemon=True)
    thread.start()
    yield holder[0]
    relay.shutdown()
    thread.join(WAIT_S)


def closed_by_server(sock: socket.socket, within_s: float) -> bool:
    """True when the server closes `sock` (EOF or reset) within `within_s`; answers are read past."""
    sock.settimeout(within_s)
    deadline = time.monotonic() + within_s
    try:
        while time.monotonic() < deadline:
            if not sock.recv(65536):
                return True
    except TimeoutError:
        return False
    except OSError:
        return True  # reset by the server
    return False

def trickle(sock: socket.socket, data: bytes, every_s: float, max_s: float) -> bool:
    """Send `data` one byte at a time; True when the server cut the connection before the end."""
    deadline = time.monotonic() + max_s
    for byte in data:
        if time.monotonic() > deadline:
            return False
        try:
            sock.sendall(bytes([byte]))
        except OSError:
            return True
        time.sleep(every_s)
    return False


def reset(sock: socket.socket) -> None:
    """Hang up the rude way: RST instead of FIN (SO_LINGER 0)."""
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    sock.close()


def test_idle_connections_below_the_pool_leave_a_webhook_served(live: Live) -> None:
    idle = [live.connect() for _ in range(LIMITS.workers - 1)]
    try:
        assert live.webhook(1) == 202
    finally:
        for sock in idle:
            sock.close()


def test_a_full_pool_refuses_new_connections_at_once_and_frees_itself(live: Live) -> None:
    assert live.webhook(6) == 202  # the pool has started a thread or more
    baseline = live.threads()
    idle = [live.connect() for _ in range(LIMITS.workers * 5)]  # far more than the pool
    try:
        began = time.monotonic()
        refused = live.connect()
        refused.settimeout(WAIT_S)
        answer = b""
        with contextlib.suppress(OSError):
            answer = refused.recv(4096)
        refused.close()
        assert answer.startswith(b"HTTP/1.1 503") or answer == b""
        assert time.monotonic() - began < WAIT_S / 2, "refused, not queued"
        assert live.threads() <= baseline + LIMITS.workers, "no thread per connection"
        # The idle ones are cut at the header deadline; a webhook is then served again.
        assert all(closed_by_server(sock, WAIT_S) for sock in idle[:LIMITS.workers])
        status = 503
        for _ in range(50):
            with contextlib.suppress(OSError):
                status = live.webhook(2, timeout=5)
            if status == 202:
                break
            time.sleep(0.1)
        assert status == 202
    finally:
        for sock in idle:
            sock.close()
    assert any("503 busy" in line for line in live.lines)
    assert live.threads() <= baseline + LIMITS.workers


def test_slow_headers_are_cut_off_at_the_header_deadline(live: Live) -> None:
    head = (b"POST /hook HTTP/1.1\r\nHost: relay\r\nX-Gitlab-Event: Note Hook\r\n"
            + b"X-Padding: " + b"a" * 200 + b"\r\n\r\n")
    sock = live.connect()
    try:
        assert trickle(sock, head, every_s=0.05, max_s=WAIT_S), "a header byte every 50 ms kept it open"
    finally:
        sock.close()
    assert [line for line in live.lines if "no complete request within 0.6 s" in line]


def test_a_slow_body_is_dropped_at_the_body_deadline(live: Live, capfd: pytest.CaptureFixture[str]) -> None:
    body = json.dumps(note_hook(note_id=3)).encode()
    sock = live.connect()
    try:
        sock.sendall(f"POST /hook HTTP/1.1\r\nHost: relay\r\nX-Gitlab-Token: {SECRET}\r\nX-Gitlab-Event: "
                     f"Note Hook\r\nContent-Length: {len(body)}\r\n\r\n".encode())
        assert trickle(sock, body, every_s=0.05, max_s=WAIT_S) or closed_by_server(sock, WAIT_S)
    finally:
        sock.close()
    assert live.started == []
    (line,) = [line for line in live.lines if "body too slow" in line]
    assert " 408 " in line
    assert capfd.readouterr().err == ""


@pytest.mark.parametrize("where", ["headers", "body"])
def test_a_client_hanging_up_mid_request_is_one_quiet_line(live: Live, capfd: pytest.CaptureFixture[str],
                                                           where: str) -> None:
    head = f"POST /hook HTTP/1.1\r\nHost: relay\r\nX-Gitlab-Token: {SECRET}\r\nContent-Length: 100\r\n"
    for rude in (False, True):
        before = len(live.lines)
        sock = live.connect()
        sock.sendall(head.encode()[:30] if where == "headers" else (head + "\r\n").encode() + b"{" * 10)
        time.sleep(0.1)  # the server is inside the read when the client goes
        reset(sock) if rude else sock.close()
        for _ in range(100):
            if len(live.lines) > before:
                break
            time.sleep(0.05)
        time.sleep(0.2)  # a second line would come now
        new = live.lines[before:]
        assert len(new) == 1, (rude, new)
        if where == "body":
            assert "hung up after" in new[0] and "of 100 body bytes" in new[0]
    assert capfd.readouterr().err == "", "no traceback"
    assert live.webhook(4) == 202


def test_a_client_that_never_reads_the_answer_is_cut_at_the_write_deadline(
        live: Live, capfd: pytest.CaptureFixture[str]) -> None:
    # Small kernel buffers on both ends (accepted sockets inherit the listener's), so the
    # server's write blocks after a few hundred answers instead of a few megabytes.
    live.relay.server.socket.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect(live.relay.address)
    sock.settimeout(1)
    request = b"GET /healthz HTTP/1.1\r\nHost: relay\r\n\r\n" * 100
    try:
        with contextlib.suppress(OSError):  # pipelined, never read: the answers fill both buffers
            for _ in range(10_000):
                sock.sendall(request)
        for _ in range(200):
            if any("hung up before the answer" in line for line in live.lines):
                break
            time.sleep(0.05)
    finally:
        reset(sock)
    time.sleep(0.2)
    (line,) = [line for line in live.lines if "hung up before the answer" in line]
    assert "TimeoutError" in line
    assert capfd.readouterr().err == ""
    assert live.webhook(5) == 202
