from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")


class TransientError(Exception):
    """A failure worth retrying: a timeout, a 502/503/504, a reset connection."""


@dataclass(frozen=True)
class RetryPolicy:
    attempts: int = 3  # total tries, the first included
    backoff_s: float = 0.5
    factor: float = 2.0

    def delays(self) -> list[float]:
        """The sleeps between tries."""
        return [self.backoff_s * self.factor**n for n in range(self.attempts - 1)]


def call_with_retry(fn: Callable[[], T], policy: RetryPolicy, sleep: Callable[[float], None]) -> T:
    delays = policy.delays()
    for delay in delays:
        try:
            return fn()
        except TransientError:
            sleep(delay)
    return fn()
