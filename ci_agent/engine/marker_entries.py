"""The entries of the status comment's marker (`ci_agent.engine.marker.ForgeState`) and the lenient
readers they share: a hand-edited or foreign entry is dropped whole, never half read."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
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


RERUN_STATES = ("pending", "flaky", "real", "unavailable")
MAX_NAME = 120  # characters of a test name kept in the marker (names are anyone's text)
MAX_NOTE = 300  # characters of a note: one sentence a person acts on
MAX_RERUN_TESTS = 5  # test names a re-run record keeps: enough to name them when it concludes
MAX_FLAKY_RUNS = 5  # run ids a flakiness record keeps (its count goes on)
MAX_RERUNS = 20  # re-run records: a fix branch sees a few failed runs
MAX_FLAKY = 50  # tests with a flakiness record; those flaky longest ago go first
_MAX_RUN_ID = 40  # characters: run ids are numbers (GitHub's, GitLab's), far shorter


def bounded(text: str, limit: int = MAX_NAME) -> str:
    """`text` cut to `limit` characters, the same way every time (it may be a key)."""
    return text if len(text) <= limit else text[:limit - 1] + "…"


@dataclass(frozen=True)
class RerunRecord:
    """The one re-run of a CI run's failed jobs (issue 16): asked and `pending`, or concluded —
    `flaky` (it passed), `real` (it failed again), `unavailable` (the forge refused: `note`).
    `attempt` is the run attempt that re-ran the jobs (0: none started), `tests` the failed
    tests it was asked for (named again when a later job concludes it)."""

    state: str
    attempt: int = 0
    tests: tuple[str, ...] = ()
    note: str = ""

    @property
    def concluded(self) -> bool:
        return self.state != "pending"

    def to_json(self) -> dict[str, Any]:
        return {"state": self.state, "attempt": self.attempt, "tests": list(self.tests), "note": self.note}

    @classmethod
    def from_json(cls, data: Any) -> RerunRecord | None:
        found = _entry(data, "attempt", ("state", "note"))
        if found is None or found[1][0] not in RERUN_STATES:
            return None
        attempt, (state, note) = found
        tests = tuple(bounded(t) for t in json_list(data.get("tests")) if isinstance(t, str))
        return cls(state, attempt, tests[:MAX_RERUN_TESTS], bounded(note, MAX_NOTE))


@dataclass(frozen=True)
class FlakyRecord:
    """How often one test got a flaky verdict (`count`), and the latest runs that gave it (their
    ids, the merge key: two jobs that each add their run add two)."""

    count: int
    runs: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"n": self.count, "runs": list(self.runs)}

    @classmethod
    def from_json(cls, data: Any) -> FlakyRecord | None:
        if not isinstance(data, Mapping) or not whole_number(data.get("n")):
            return None
        runs = tuple(r for r in json_list(data.get("runs"))
                     if isinstance(r, str) and 0 < len(r) <= _MAX_RUN_ID)
        return cls(int(data["n"]), runs[-MAX_FLAKY_RUNS:])

    def with_run(self, run: str) -> FlakyRecord:
        """One more flaky verdict, from `run`; a run already counted adds nothing."""
        if run in self.runs:
            return self
        return FlakyRecord(self.count + 1, (*self.runs, run)[-MAX_FLAKY_RUNS:])

    def merged_with(self, current: FlakyRecord) -> FlakyRecord:
        """`current` plus the runs only we counted."""
        ours = [r for r in self.runs if r not in current.runs]
        runs = (*current.runs, *ours)[-MAX_FLAKY_RUNS:]
        return FlakyRecord(max(self.count, current.count + len(ours)), runs)


def run_order(run: str) -> tuple[int, str]:
    """Run ids oldest first: forges number runs upwards; anything else sorts before them."""
    number = run.isascii() and run.isdigit() and len(run) <= _MAX_RUN_ID
    return (int(run), run) if number else (-1, run)


def records(value: Any, read: Callable[[Any], Any]) -> dict[str, Any]:
    """A JSON object of entries, each read leniently: a broken entry is dropped, not the rest."""
    if not isinstance(value, Mapping):
        return {}
    found = {bounded(str(k)): read(v) for k, v in value.items()}
    return {k: v for k, v in found.items() if v is not None}


def newest_reruns(reruns: Mapping[str, RerunRecord]) -> dict[str, RerunRecord]:
    kept = sorted(reruns, key=run_order)[-MAX_RERUNS:]
    return {run: reruns[run] for run in kept}


def newest_flaky(flaky: Mapping[str, FlakyRecord]) -> dict[str, FlakyRecord]:
    """At most `MAX_FLAKY` tests: those whose latest flaky run is the newest (test names are
    anyone's text; the marker has a size limit)."""
    def latest(test: str) -> tuple[tuple[int, str], str]:
        runs = flaky[test].runs
        return (max(map(run_order, runs)) if runs else (-2, ""), test)
    kept = sorted(flaky, key=latest)[-MAX_FLAKY:]
    return {test: flaky[test] for test in kept}


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


def amount(value: Any) -> float:
    """A USD amount as we write them: finite and >= 0; anything else reads as 0."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0.0
    return float(value) if math.isfinite(value) and 0 <= value < 1e12 else 0.0


def finite_time(value: Any) -> float | None:
    """A command time: a finite number of seconds (JSON allows 1e400 and Infinity; five infinite
    times would hold the rate limit shut forever)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, int) and not -2**53 <= value <= 2**53:
        return None
    return float(value) if math.isfinite(value) else None
