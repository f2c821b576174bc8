"""`ModelClient` over the official `anthropic` SDK: the only module that imports it.

The SDK's own retries are off (`max_retries=0`): tenacity retries here, so the policy is ours
and visible — 429, 529, other 5xx and dropped connections are retried, honouring the server's
`retry-after-ms` / `retry-after` (seconds or an HTTP date), within a bounded number of attempts
and a bounded total wait. Everything else becomes a `ModelServiceError` with one sentence a
person reading a CI log can act on.
"""

from __future__ import annotations

import email.utils
import time
import typing
from typing import Any

import anthropic

from ci_agent.errors import ModelServiceError
from ci_agent.retry import Retrier, RetryPolicy, Sleep, current_waiting


def _first_sonnet() -> str:
    """The first `claude-sonnet-*` literal the SDK lists (its list is newest first)."""
    for arg in typing.get_args(anthropic.types.Model):
        for name in typing.get_args(arg):
            if isinstance(name, str) and name.startswith("claude-sonnet-"):
                return name
    return "claude-sonnet-4-5"  # only if the SDK's model list ever changes shape


DEFAULT_MODEL = _first_sonnet()
_RETRIED_STATUS = frozenset({408, 409, 429})


def _retryable(error: BaseException) -> bool:
    if isinstance(error, anthropic.APITimeoutError):
        return False  # already waited `timeout_s`; a retry would double a long silence
    if isinstance(error, anthropic.APIConnectionError):
        return True
    if isinstance(error, anthropic.APIStatusError):
        return error.status_code in _RETRIED_STATUS or error.status_code >= 500
    return False


def _asked_wait(error: BaseException) -> float | None:
    if isinstance(error, anthropic.APIStatusError):
        return retry_after_seconds(error.response.headers)
    return None


def retry_after_seconds(headers: typing.Mapping[str, str], now: float | None = None) -> float | None:
    """The server's requested delay: `retry-after-ms`, else `retry-after` as seconds or a date."""
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        raw = headers.get(name)
        if raw is None:
            continue
        try:
            return max(0.0, float(raw) / scale)
        except ValueError:
            pass
    raw = headers.get("retry-after")
    parsed = email.utils.parsedate_tz(raw) if raw else None
    if parsed is None:
        return None
    return max(0.0, email.utils.mktime_tz(parsed) - (time.time() if now is None else now))


class AnthropicClient:
    """The real model service. `sleep` (default: the installed `Waiting`'s) is injectable so
    tests read the delays it chose."""

    def __init__(
        self,
        api_key: str,
        base_url: str | None = None,
        timeout_s: float = 300,
        max_retries: int = 4,
        *,
        max_total_wait_s: float = 120,
        sleep: Sleep | None = None,
    ) -> None:
        self._sdk = anthropic.Anthropic(
            api_key=api_key, base_url=base_url, timeout=timeout_s, max_retries=0
        )
        self._timeout_s = timeout_s
        self._attempts = max(1, max_retries + 1)
        self._retrier = Retrier(RetryPolicy(self._attempts, max_total_wait_s),
                                sleep or current_waiting().sleep)
        self.waits = self._retrier.waits  # every delay chosen between attempts, in order

    def create(self, request: dict[str, Any]) -> dict[str, Any]:
        try:
            message = self._retrier.call(lambda: self._once(request), _retryable, _asked_wait)
        except anthropic.APIError as error:
            raise ModelServiceError(self._sentence(error, request)) from error
        data: dict[str, Any] = dict(message.to_dict(mode="json"))
        if data.get("stop_reason") == "refusal":
            raise ModelServiceError(
                'Claude declined to answer this request (stop_reason "refusal"); '
                "nothing was changed."
            )
        return data

    def _once(self, request: dict[str, Any]) -> anthropic.types.Message:
        # A dict body cannot pick one of the SDK's typed overloads; stream is never set here.
        return typing.cast(anthropic.types.Message, self._sdk.messages.create(**request))

    def _sentence(self, error: anthropic.APIError, request: dict[str, Any]) -> str:
        model = request.get("model", "?")
        if isinstance(error, anthropic.APITimeoutError):
            return f"The Anthropic API did not answer within {self._timeout_s:g} s (timeout_s)."
        if isinstance(error, anthropic.APIConnectionError):
            cause = str(error.__cause__ or error.message).strip().rstrip(".")
            return (f"Could not reach the Anthropic API at {self._sdk.base_url} after "
                    f"{self._attempts} attempts ({cause}).")
        if not isinstance(error, anthropic.APIStatusError):
            return f"The Anthropic API returned an unusable response: {error.message}"
        return _status_sentence(error, str(model), self._attempts)


def _status_sentence(error: anthropic.APIStatusError, model: str, attempts: int) -> str:
    status = error.status_code
    detail = error.api_message or ""
    if status == 401:
        return "The Anthropic API rejected the API key (401); check ANTHROPIC_API_KEY."
    if status == 402 or (status == 400 and any(w in detail.lower() for w in ("credit", "billing"))):
        return ("The Anthropic account has no credit left; add credits under Plans & Billing "
                "in the Anthropic console.")
    if status == 403:
        return f"The API key is not allowed to use model {model!r} (403); check its permissions."
    if status == 404:
        return (f"The Anthropic API does not know model {model!r} (404); set model.name in "
                ".ci-agent.yml or --model to a current model.")
    if status == 413:
        return ("The request is too large for the Anthropic API (413); lower context.max_bytes "
                "in .ci-agent.yml.")
    if status == 429:
        return f"The Anthropic API kept rate-limiting us (429) after {attempts} attempts; try later."
    if status == 529:
        return f"The Anthropic API stayed overloaded (529) after {attempts} attempts; try later."
    if status >= 500:
        return f"The Anthropic API kept failing ({status}) after {attempts} attempts; try later."
    reason = f": {detail}" if detail else ""
    return f"The Anthropic API rejected the request ({status}){reason}"
