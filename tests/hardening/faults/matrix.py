"""The fault matrix of issue 8 (service faults): which fault hits which request, and the
invariants every faulted job and its fault-free rerun must keep.

A reference job is run once without faults and its API requests recorded (each test module pins
that list as REFERENCE; its reference test says when the product's sequence changes, and each
point checks that its fault did hit). Fault point k then
re-runs the same job in a fresh world with the fault aimed at exactly request k: its method, its
path (anchored, escaped) and `skip` = how many earlier requests of the clean run had the same
method and path (the job is deterministic up to the fault, so this is request k again).

Kinds (the brief's list): a 429 storm (more 429s in a row, each with `retry-after`, than the
client's attempts), a 5xx (500/502/503, or 529 overloaded for the model), a timeout (the answer
held past the client's timeout; the request itself was served), a dropped connection (closed
before the service saw the request), a partial response (served, then headers and half the body).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from tests.fakes.breakage import DROP, PARTIAL, TIMEOUT

STORM, HTTP_5XX = "storm429", "5xx"
__all__ = [
    "DROP",
    "HTTP_5XX",
    "KINDS",
    "PARTIAL",
    "STORM",
    "TIMEOUT",
    "Outcome",
    "Point",
    "Request",
    "assert_faulted_job_is_clean",
    "point",
    "rotated",
]
KINDS = (STORM, HTTP_5XX, TIMEOUT, DROP, PARTIAL)
STORM_LENGTH = 8  # more than any client's attempts (5 for the forges, 5 for the model)
CLIENT_TIMEOUT_S = 1  # the forges' and the model client's timeout in these tests
HOLD_S = 2.5  # how long a `timeout` fault holds its answer: past the client's timeout
SERVER_ERRORS = (500, 502, 503)


@dataclass(frozen=True)
class Request:
    """One request of a clean run, as the fault matrix aims at it."""

    server: str  # "api", or "storage" for GitHub's download redirects
    method: str
    path: str


@dataclass(frozen=True)
class Point:
    """Fault point: `kind` at request `index` of the clean run."""

    index: int
    kind: str
    request: Request
    skip: int  # earlier requests of the clean run with the same server, method and path

    @property
    def path_regex(self) -> str:
        return "^" + re.escape(self.request.path) + "$"

    @property
    def status(self) -> int:
        """The 5xx status of a `5xx` point (rotated over the request indexes)."""
        return SERVER_ERRORS[self.index % len(SERVER_ERRORS)]

    def __str__(self) -> str:
        r = self.request
        where = " (storage)" if r.server != "api" else ""
        return f"#{self.index} {self.kind} on {r.method} {r.path}{where}"


def point(clean: Sequence[Request], index: int, kind: str) -> Point:
    target = clean[index]
    return Point(index, kind, target, sum(1 for r in clean[:index] if r == target))


def rotated(requests: Sequence[Request], per_read: int = 1) -> list[tuple[int, str]]:
    """The fault points of a clean run: every kind at each write (POST/PUT/PATCH/DELETE: whether
    the write landed is what a client cannot tell, so every kind behaves differently there), and
    `per_read` kinds at each read, rotating (read k gets kinds k, k+1, ... mod 5) so that every
    kind meets reads all along the job. `per_read` 5 is the whole matrix."""
    points: list[tuple[int, str]] = []
    for k, request in enumerate(requests):
        count = per_read if request.method == "GET" else len(KINDS)
        points.extend((k, KINDS[(k + j) % len(KINDS)]) for j in range(count))
    return points


@dataclass(frozen=True)
class Outcome:
    """One ci-agent job as the invariants read it."""

    code: int
    stdout: str
    stderr: str
    written: str  # what it left for the CI: step outputs / dotenv, and the job summary
    crash: str = ""  # an exception that escaped main(): a traceback in the job's log
    git_config: str = ""  # the workspace's .git/config after the job (push credentials left?)

    def __str__(self) -> str:
        return (f"exit {self.code}\n--- stdout\n{self.stdout[-2000:]}\n--- stderr\n{self.stderr[-3000:]}"
                + (f"\n--- crash\n{self.crash[-3000:]}" if self.crash else ""))


def assert_faulted_job_is_clean(done: Outcome, at: object, service: str, secrets: Sequence[str],
                                succeeded: tuple[int, ...] = (0,)) -> None:
    """The job under a fault: it succeeded (an exit code in `succeeded`), or exited 5 with one
    `ci-agent: error:` sentence naming `service`; no traceback, no token anywhere in what it
    printed or wrote, none left in the workspace's .git/config."""
    assert not done.crash, f"{at}: an exception escaped ci-agent:\n{done.crash}"
    assert done.code in (*succeeded, 5), f"{at}: {done}"
    text = done.stdout + done.stderr
    assert "Traceback" not in text, f"{at}: {done}"
    assert tokens_in(text + done.written, secrets) == [], f"{at}: a token in the job's output"
    assert tokens_in(done.git_config, secrets) == [], f"{at}: a token left in .git/config"
    if done.code == 5:
        said = " ".join(error_lines(done.stderr))
        assert service in said, f"{at}: the error names {service}: {done}"


def tokens_in(text: str, secrets: Sequence[str]) -> list[str]:
    """Secrets found in `text`, ignoring GitHub's `::add-mask::` commands (the masking itself)."""
    kept = "\n".join(line for line in text.splitlines() if not line.startswith("::add-mask::"))
    return [s for s in secrets if s and s in kept]


def error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("ci-agent: error:")]
