"""The entries of the status comment's marker (`ci_agent.engine.marker.ForgeState`) and the lenient
readers they share: a hand-edited or foreign entry is dropped whole, never half read."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ci_agent.engine.budget import AttemptRecord, AttemptResult


@dataclass(frozen=True)
class Tried:
    head: str
    number: int
    fingerprint: str
    after: str
    run: str
    summary: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"head": self.head, "n": self.number, "fp": self.fingerprint, "after": self.after,
                "run": self.run, "summary": self.summary}

    @classmethod
    def from_json(cls, data: Any) -> Tried | None:
        found = _entry(data, "n", ("head", "fp", "after", "run", "summary"))
        if found is None:
            return None
        n, (head, fp, after, run, summary) = found
        return cls(head, n, fp, after, run, summary)

    def record(self) -> AttemptRecord:
        return AttemptRecord(self.number, AttemptResult.FAILED, self.fingerprint, self.after, self.run,
                             self.summary)


@dataclass(frozen=True)
class Unverifiable:
    """A verify command that could not run (timeout, exit 126/127, killed, not startable) while
    an attempt on failure `fingerprint` was checked. That is no verdict on the patch, so it does
    not count against the budget; but a rerun for the same failure with the same command would
    pay for the same model call and meet the same wall, so it makes none while this record is
    standing. A green run or `/ci-agent retry` lifts it (`lifted` only ever turns true, so two
    jobs' markers merge without reviving it); another verify command is not held back by it."""

    fingerprint: str
    verify: str  # the command as a shell would show it
    reason: str
    code: int  # the exit code of the run that met it (2: cannot start, 1: timeout or killed)
    run: str  # `<run id>-<attempt number>`: unique, the merge key
    lifted: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"fp": self.fingerprint, "verify": self.verify, "reason": self.reason, "code": self.code,
                "run": self.run, "lifted": self.lifted}

    @classmethod
    def from_json(cls, data: Any) -> Unverifiable | None:
        found = _entry(data, "code", ("fp", "verify", "reason", "run"))
        if found is None:
            return None
        code, (fingerprint, verify, reason, run) = found
        return cls(fingerprint, verify, reason, code, run, data.get("lifted") is True)


@dataclass(frozen=True)
class Proposed:
    """A patch posted for review (mode propose): its hash guards `/ci-agent apply` against an
    edited comment; `base` is the commit it was made on."""

    sha256: str
    base: str
    branch: str
    number: int
    summary: str = ""
    fingerprint: str = ""  # the failure it addresses (the applied commit's CI-Agent-Failure)

    def to_json(self) -> dict[str, Any]:
        return {"sha256": self.sha256, "base": self.base, "branch": self.branch, "n": self.number,
                "summary": self.summary, "fp": self.fingerprint}

    @classmethod
    def from_json(cls, data: Any) -> Proposed | None:
        found = _entry(data, "n", ("sha256", "base", "branch", "summary", "fp"))
        if found is None:
            return None
        n, (sha, base, branch, summary, fingerprint) = found
        return cls(sha, base, branch, n, summary, fingerprint)


def _entry(data: Any, number: str, names: tuple[str, ...]) -> tuple[int, list[str]] | None:
    """A marker entry's whole number and strings, or None when any of them is missing or of another
    type (a hand-edited or foreign entry is dropped, not half read)."""
    if not isinstance(data, Mapping) or not whole_number(data.get(number)):
        return None
    texts = [data.get(name) for name in names]
    if not all(isinstance(t, str) for t in texts):
        return None
    return int(data[number]), [str(t) for t in texts]


def json_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def whole_number(value: Any) -> bool:
    """A JSON integer as we write them (JSON `true` is a Python int too, and is none)."""
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**53


def finite_time(value: Any) -> float | None:
    """A command time: a finite number of seconds (JSON allows 1e400 and Infinity; five infinite
    times would hold the rate limit shut forever)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, int) and not -2**53 <= value <= 2**53:
        return None
    return float(value) if math.isfinite(value) else None
