"""Retrying calls to a remote service, the same way for every client (the GitHub and GitLab
forges, the Anthropic client).

Each client says *which* failures are worth another try and how long the server asked us to wait;
this module does the rest: exponential backoff with jitter (about 1, 2, 4 ... capped at 30 s) when
the server asked nothing, at most `max_attempts` tries, and never a sleep past `max_total_wait_s`
in all (tenacity computes the wait before it asks whether to stop, so a server asking for longer
than the budget makes us stop at once).

How this process waits (really sleeping, pacing requests, the forges' request timeout) is a
`Waiting`. Production runs with the default one; a test installs its own with `waiting_as`, and
every client built while it is installed uses it: the waits are recorded, never slept.
"""

from __future__ import annotations

import contextlib
import random
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TypeVar

from tenacity import RetryCallState, Retrying, retry_if_exception

T = TypeVar("T")
Sleep = Callable[[float], None]
MAX_BACKOFF_S = 30.0


@dataclass(frozen=True)
class Waiting:
    """How the process waits. `pace`: space requests where a service asks for it (GitHub's advice
    against secondary rate limits); `forge_timeout_s`: the forges' per-request timeout, None for
    their own default."""

    sleep: Sleep = time.sleep
    pace: bool = True
    forge_timeout_s: int | None = None


PRODUCTION = Waiting()
_installed: list[Waiting] = [PRODUCTION]


def current_waiting() -> Waiting:
    """The `Waiting` clients built now use: production's, unless a test installed another."""
    return _installed[-1]


@contextlib.contextmanager
def waiting_as(waiting: Waiting) -> Iterator[Waiting]:
    """Install `waiting` for every client built inside the block (a test's recorder)."""
    _installed.append(waiting)
    try:
        yield waiting
    finally:
        _installed.remove(waiting)


@dataclass(frozen=True)
class RetryPolicy:
    """At most `max_attempts` tries (at least one), sleeping at most `max_total_wait_s` in all."""

    max_attempts: int
    max_total_wait_s: float


# The forges' policy: a few tries within five minutes (a rate limit may ask for most of them).
FORGE_RETRY = RetryPolicy(max_attempts=5, max_total_wait_s=300)


@dataclass
class Tries:
    """How many times one call was tried, for the sentence that reports its failure."""

    count: int = 0


def backoff(attempt: int) -> float:
    """The wait after try number `attempt` when the server asked nothing: 2^(n-1) s with jitter."""
    base = min(MAX_BACKOFF_S, 2.0 ** (attempt - 1))
    return base * (0.75 + 0.25 * random.random())


class Retrier:
    """Runs calls under one policy; every wait it chose is in `waits`, in order, and slept through
    `sleep`."""

    def __init__(self, policy: RetryPolicy, sleep: Sleep) -> None:
        self.policy = RetryPolicy(max(1, policy.max_attempts), policy.max_total_wait_s)
        self._sleep = sleep
        self.waits: list[float] = []

    def call(self, fn: Callable[[], T], retryable: Callable[[BaseException], bool],
             asked_wait: Callable[[BaseException], float | None], tries: Tries | None = None) -> T:
        """`fn`, tried again while `retryable(error)`; the last error is raised as it was.
        `asked_wait(error)` is the server's requested delay, if it gave one."""
        counter = tries if tries is not None else Tries()

        def counted() -> T:
            counter.count += 1
            return fn()

        def wait(state: RetryCallState) -> float:
            error = state.outcome.exception() if state.outcome else None
            asked = asked_wait(error) if error is not None else None
            return asked if asked is not None else backoff(state.attempt_number)

        retrying = Retrying(retry=retry_if_exception(retryable), wait=wait, stop=self._stop,
                            sleep=self._record_and_sleep, reraise=True)
        return retrying(counted)

    def _record_and_sleep(self, seconds: float) -> None:
        self.waits.append(seconds)
        self._sleep(seconds)

    def _stop(self, state: RetryCallState) -> bool:
        if state.attempt_number >= self.policy.max_attempts:
            return True
        return state.idle_for + state.upcoming_sleep > self.policy.max_total_wait_s
