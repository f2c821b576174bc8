"""Where the attempt engine writes down its attempts, and reads back what counts (DESIGN.md §4.3).

The published attempts are commits on the fix branch in every mode: `state.chain_events` reads
them from the local branch the engine works on. What is not a commit — an attempt that failed a
local verify and was rolled back, a green run, a retry — is a *side record* tied to the commit it
was tried on (its head). A `Ledger` keeps those:

- `GitLedger` (`fix --local`): commits with trailers on the side ref
  `refs/ci-agent/attempts/<fix branch>` of the user's repository (`ci_agent.engine.state`).
- `MarkerLedger` (the CI cycle): the status comment's marker (`ci_agent.engine.marker.ForgeState`),
  which is the only state a CI job keeps between runs. It reads the side facts the marker holds
  for the fix branch on origin (CI verdicts, rolled-back attempts, resets) and writes this run's
  records into the marker it hands back (`marker`), which the cycle posts with its status.

Both number an attempt from the events they read (`record(head, build)` calls `build(events)`),
and both record an attempt id once: a rerun re-recording it changes nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Protocol

from ci_agent import git
from ci_agent.engine import state
from ci_agent.engine.budget import AttemptRecord, AttemptResult, Event, Reset, ResetReason
from ci_agent.engine.marker import ChainLink, ForgeState
from ci_agent.engine.marker_entries import Tried

Build = Callable[[list[Event]], Event]
# A side record's summary as the attempt engine reads it back in the run that wrote it (a commit
# trailer's length); the marker keeps up to 200 characters for the runs after.
READ_BACK_SUMMARY = 120
MARKER_SUMMARY = 200


class Ledger(Protocol):
    def events(self) -> list[Event]:
        """The events of the current count's fix branch, oldest first (`budget.assess` reads them)."""
        ...

    def record(self, head: str, build: Build) -> state.Recorded:
        """Append `build(current events)` as a side record on commit `head`."""
        ...


def _read_back(event: Event) -> Event:
    if isinstance(event, AttemptRecord) and len(event.summary) > READ_BACK_SUMMARY:
        return replace(event, summary=event.summary[:READ_BACK_SUMMARY])
    return event


class GitLedger:
    """Side records as commits on `refs/ci-agent/attempts/<fix branch>`, moved compare-and-swap."""

    def __init__(self, repo: Path, fix_branch: str, identity: git.Identity) -> None:
        self.repo, self.fix_branch, self.identity = repo, fix_branch, identity

    def events(self) -> list[Event]:
        return state.read_events(self.repo, self.fix_branch)

    def record(self, head: str, build: Build) -> state.Recorded:
        return state.record(self.repo, self.fix_branch, head, lambda events: _read_back(build(events)),
                            self.identity)


def marker_records(chain: list[ChainLink], marker: ForgeState) -> list[tuple[str, Event]]:
    """What the marker knows about the fix branch `chain` as side records (head, event): a passed
    attempt is a green run after its commit, a rolled-back attempt a failed record, a recorded
    green run or retry a reset. (A pending or failed attempt commit counts as failed already.)"""
    found: list[tuple[str, Event]] = []
    for link in chain:
        if link.attempt is not None and marker.results.get(link.key) == AttemptResult.PASSED.value:
            found.append((link.sha, Reset(ResetReason.GREEN_RUN)))
        found.extend((link.sha, t.record()) for t in marker.tried if t.head == link.sha)
        for reason, head in marker.resets:
            if head == link.sha:
                try:
                    found.append((link.sha, Reset(ResetReason(reason))))
                except ValueError:
                    continue
    return found


class MarkerLedger:
    """Side records in the status comment's marker. `chain` is the fix branch as origin has it
    (`marker.read_chain`) and the engine's local branch starts there; `run_id` names this CI run
    (a rolled-back attempt is `<run id>-<number>` in the marker). `marker` is the marker with
    this run's records, for the cycle to post."""

    def __init__(self, repo: Path, fix_branch: str, marker: ForgeState, chain: list[ChainLink],
                 run_id: str, *, read_marker: bool = True) -> None:
        self.repo, self.fix_branch, self.marker, self.run_id = repo, fix_branch, marker, run_id
        # A dry run counts the fix branch's commits only, as it always has (read_marker=False).
        self._records: list[tuple[str, Event]] = []
        if read_marker:
            chain_now = state.chain_events(repo, fix_branch)
            for head, event in marker_records(chain, marker):
                if not state.already_recorded(event, state.attach(chain_now, self._records)):
                    self._records.append((head, event))

    def events(self) -> list[Event]:
        chain = state.chain_events(self.repo, self.fix_branch)
        return state.attach(chain, self._records) if chain else []

    def record(self, head: str, build: Build) -> state.Recorded:
        events = self.events()
        full = build(events)
        event = _read_back(full)
        if state.already_recorded(event, events):
            return state.Recorded(event, "", already=True)
        self._records.append((head, event))
        self._write(head, full)
        return state.Recorded(event, "")

    def _write(self, head: str, event: Event) -> None:
        """This run's record into the marker, in the marker's own form."""
        if isinstance(event, Reset):
            self.marker = replace(self.marker, resets=(*self.marker.resets, (event.reason.value, head)))
            return
        if event.result is not AttemptResult.FAILED:
            raise ValueError("a marker keeps failed attempts and resets; an attempt that passed or waits "
                             "for CI is a commit on the fix branch")
        tried = Tried(head, event.number, event.fingerprint, event.after, f"{self.run_id}-{event.number}",
                      " ".join(event.summary.split())[:MARKER_SUMMARY])
        self.marker = replace(self.marker, tried=(*self.marker.tried, tried))
