"""The one error type of ci-agent and its exit codes (DESIGN.md §4.2).

Callers raise a subclass; `main()` is the only place that turns one into an exit code.
"""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    OK = 0
    FAILURE = 1  # expected failure with a clear message
    USAGE = 2  # usage or configuration error
    BUDGET_EXHAUSTED = 3
    NO_SAFE_PATCH = 4
    EXTERNAL_SERVICE = 5


class CiAgentError(Exception):
    """An error with a message written for the person reading the CI log."""

    exit_code: ExitCode = ExitCode.FAILURE


class UsageError(CiAgentError):
    exit_code = ExitCode.USAGE


class InputError(CiAgentError):
    """An input file could not be read or is not in any format we know."""

    exit_code = ExitCode.FAILURE


class ConfigError(CiAgentError):
    """`.ci-agent.yml` (or a setting) is invalid; the message names the offending key."""

    exit_code = ExitCode.USAGE


class ModelServiceError(CiAgentError):
    """The model service failed after retries, or refused; the message is one sentence."""

    exit_code = ExitCode.EXTERNAL_SERVICE


class ForgeError(CiAgentError):
    """The forge API (GitHub, GitLab) failed after retries, or refused; one sentence."""

    exit_code = ExitCode.EXTERNAL_SERVICE


class StatusForgeError(ForgeError):
    """A ForgeError that remembers the HTTP status, for the few callers that expect one."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def status_of(error: ForgeError) -> int | None:
    return error.status if isinstance(error, StatusForgeError) else None
