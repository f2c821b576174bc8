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

Flakiness is a fact about a test, not about a fix branch: `GitFlakyLog` (`fix --local`, issue 16)
keeps one commit per flaky verdict on `refs/ci-agent/flaky` of the user's repository, naming the
tests that failed and then passed when re-run, so a test flaky `triage.quarantine_after` times is
named a quarantine candidate. (In CI the status comment's marker keeps the same count.)
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Sequence
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


FLAKY_REF = "refs/ci-agent/flaky"
_FLAKY_LINE = "CI-Agent-Flaky-Test: "
# Verdicts read back (newest first): a test's count is over its recent history, and reading it
# stays bounded however long the repository has been using ci-agent.
FLAKY_HISTORY = 500
_FLAKY_TRIES = 5


def flaky_message(tests: Sequence[str], head: str) -> str:
    """One verdict as a commit message: each test name JSON-quoted on its own line, so no name
    (untrusted: it came from a log) can add or split a line."""
    lines = [f"ci-agent: flaky tests at {head[:12]}", ""]
    lines.extend(_FLAKY_LINE + json.dumps(t, ensure_ascii=True) for t in dict.fromkeys(tests))
    return "\n".join(lines) + "\n"


def flaky_tests_of(message: str) -> list[str]:
    found = []
    for line in message.splitlines():
        if line.startswith(_FLAKY_LINE):
            try:
                name = json.loads(line[len(_FLAKY_LINE):])
            except ValueError:
                continue
            if isinstance(name, str):
                found.append(name)
    return found


class GitFlakyLog:
    """Flaky verdicts as commits on `refs/ci-agent/flaky` (an empty tree; parents chain them),
    moved compare-and-swap like the attempt records."""

    def __init__(self, repo: Path, identity: git.Identity) -> None:
        self.repo, self.identity = repo, identity

    def counts(self) -> Counter[str]:
        """How many flaky verdicts each test has had (within the last `FLAKY_HISTORY`)."""
        if state.rev(self.repo, FLAKY_REF) is None:
            return Counter()
        out = git.git_ok(self.repo, ["log", f"--max-count={FLAKY_HISTORY}", "--format=%B%x00", FLAKY_REF])
        found: Counter[str] = Counter()
        for message in out.split("\0"):
            found.update(dict.fromkeys(flaky_tests_of(message), 1))
        return found

    def add(self, tests: Sequence[str], head: str) -> Counter[str]:
        """Record one flaky verdict on `tests` (seen at commit `head`); the counts after it."""
        env = {"GIT_AUTHOR_NAME": self.identity.name, "GIT_AUTHOR_EMAIL": self.identity.email,
               "GIT_COMMITTER_NAME": self.identity.name, "GIT_COMMITTER_EMAIL": self.identity.email}
        tree = git.git_ok(self.repo, ["mktree"], stdin="").strip()
        for _ in range(_FLAKY_TRIES):
            old = state.rev(self.repo, FLAKY_REF)
            args = ["commit-tree", tree] + (["-p", old] if old else []) + ["-F", "-"]
            commit = git.git_ok(self.repo, args, stdin=flaky_message(tests, head), env=env).strip()
            try:
                state.compare_and_swap(self.repo, FLAKY_REF, commit, old)
            except state.ConflictError:
                continue
            return self.counts()
        raise state.StateError(f"{FLAKY_REF} keeps moving under us; is another ci-agent running?")
