from __future__ import annotations

import time
from collections.abc import Callable

from fetcher.retry import RetryPolicy, call_with_retry

Transport = Callable[[str], bytes]


class Client:
    def __init__(self, transport: Transport, policy: RetryPolicy | None = None,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self._transport = transport
        self._policy = policy or RetryPolicy()
        self._sleep = sleep

    def get(self, url: str) -> bytes:
        return call_with_retry(lambda: self._transport(url), self._policy, self._sleep)
