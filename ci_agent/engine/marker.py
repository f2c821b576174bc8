"""Durable budget state of a fix branch on a forge (DESIGN.md §4.3), read fresh on every run.

Two sources, both outside the runner:
- the REMOTE fix branch (fetched from `origin`): every published attempt is a commit with
  `CI-Agent-*` trailers (`ci_agent.engine.state` writes them); the first commit without them, walking back
  from the tip, is a human commit and starts a new count;
- the hidden marker of our status comment (`ForgeState`): what CI said about each attempt (keyed
  by the attempt's id, its `CI-Agent-Run` trailer), the CI runs already handled (keyed by run id,
  so a rerun of the same run never counts twice), green-run resets, and whether the escalation
  comment was posted.

In PR mode an attempt is committed `pending`; the NEXT CI run on the fix branch decides it:
`observe_run` turns that run into a passed or failed result (pure).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ci_agent import git
from ci_agent.engine import state
from ci_agent.engine.budget import AttemptRecord, AttemptResult, Event, Reset, ResetReason
from ci_agent.engine.marker_entries import (
    FlakyRecord,
    Proposed,
    RerunRecord,
    Tried,
    Unverifiable,
    amount,
    bounded,
    finite_time,
    json_list,
    newest_flaky,
    newest_reruns,
    records,
    whole_number,
)

STATE_VERSION = 1
REMOTE_PREFIX = "refs/ci-agent/remote/"
_MAX_RUNS = 200  # handled run ids kept in the marker; far more than one branch ever sees
_MAX_HANDLED = 200  # comment ids; older ones are still marked by our reaction
_MAX_TIMES = 20  # command times: the rate limit looks at far fewer


@dataclass(frozen=True)
class ForgeState:
    """The JSON kept in the status comment's marker."""

    fix_branch: str = ""
    source_branch: str = ""
    results: Mapping[str, str] = field(default_factory=dict)  # attempt id -> failed|passed
    after: Mapping[str, str] = field(default_factory=dict)  # attempt id -> fingerprint CI showed
    runs: Mapping[str, str] = field(default_factory=dict)  # CI run id -> verdict we took
    resets: tuple[tuple[str, str], ...] = ()  # (reason, head sha) of green runs and retries
    escalated: bool = False
    escalation_posted: bool = False
    fixed: str = ""  # the commit CI went green on
    tokens: int = 0  # total tokens spent on this fix branch
    # Money (issue 16): USD spent on this fix branch; what had been spent at the last green run
    # or retry (the branch cap counts what came after); the cap that stopped a run ("attempt",
    # "fix branch"), which holds every model call back until a green run or a retry.
    cost_usd: float = 0.0
    cost_base: float = 0.0
    capped: str = ""
    # Attempts that failed a local `verify` and were rolled back (never pushed): the commit they
    # were tried on is in `head`.
    tried: tuple[Tried, ...] = ()
    # Slash commands: comment ids already acted on (the 👀 reaction is the durable mark; this is
    # the fast path) and when recent commands came (the per-change-request rate limit).
    handled: tuple[int, ...] = ()
    command_times: tuple[float, ...] = ()
    # mode propose: the patch posted in the status comment, for `/ci-agent apply`.
    proposed: Proposed | None = None
    # Verify commands that could not run: the failures no rerun pays for again (see Unverifiable).
    unverifiable: tuple[Unverifiable, ...] = ()
    # Issue 16: the one re-run of each CI run's failed jobs (run id -> record), and the flaky
    # verdicts per test (test name -> record).
    reruns: Mapping[str, RerunRecord] = field(default_factory=dict)
    flaky: Mapping[str, FlakyRecord] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"v": STATE_VERSION, "fix_branch": self.fix_branch, "source_branch": self.source_branch,
                "results": dict(self.results), "after": dict(self.after), "runs": dict(self.runs),
                "resets": [list(r) for r in self.resets], "escalated": self.escalated,
                "escalation_posted": self.escalation_posted, "fixed": self.fixed, "tokens": self.tokens,
                "cost_usd": self.cost_usd, "cost_base": self.cost_base, "capped": self.capped,
                "tried": [t.to_json() for t in self.tried], "handled": list(self.handled),
                "command_times": list(self.command_times),
                "proposed": self.proposed.to_json() if self.proposed else None,
                "unverifiable": [u.to_json() for u in self.unverifiable],
                # issue 16's records only when there are some: a marker without them reads the same
                **({"reruns": {k: r.to_json() for k, r in self.reruns.items()}} if self.reruns else {}),
                **({"flaky": {k: f.to_json() for k, f in self.flaky.items()}} if self.flaky else {})}

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | None) -> ForgeState:
        """Lenient: a hand-edited or foreign marker loses only the fields it broke."""
        if not isinstance(data, Mapping) or data.get("v") != STATE_VERSION:
            return cls()

        def strings(name: str) -> dict[str, str]:
            value = data.get(name)
            if not isinstance(value, Mapping):
                return {}
            return {str(k): v for k, v in value.items() if isinstance(v, str)}

        resets = tuple((r[0], r[1]) for r in json_list(data.get("resets"))
                       if isinstance(r, list) and len(r) == 2 and all(isinstance(x, str) for x in r))
        tokens: Any = data.get("tokens")
        return cls(fix_branch=str(data.get("fix_branch") or ""),
                   source_branch=str(data.get("source_branch") or ""),
                   results=strings("results"), after=strings("after"), runs=strings("runs"),
                   resets=resets, escalated=data.get("escalated") is True,
                   escalation_posted=data.get("escalation_posted") is True,
                   fixed=str(data.get("fixed") or ""),
                   tokens=tokens if whole_number(tokens) else 0,
                   cost_usd=amount(data.get("cost_usd")), cost_base=amount(data.get("cost_base")),
                   capped=str(data.get("capped") or "")[:20],
                   tried=tuple(t for t in (Tried.from_json(x) for x in json_list(data.get("tried")))
                               if t is not None)[-_MAX_RUNS:],
                   handled=tuple(x for x in json_list(data.get("handled"))
                                 if whole_number(x))[-_MAX_HANDLED:],
                   command_times=tuple(t for t in map(finite_time, json_list(data.get("command_times")))
                                       if t is not None)[-_MAX_TIMES:],
                   proposed=Proposed.from_json(data.get("proposed")),
                   unverifiable=tuple(u for u in (Unverifiable.from_json(x)
                                                  for x in json_list(data.get("unverifiable")))
                                      if u is not None)[-_MAX_RUNS:],
                   reruns=newest_reruns(records(data.get("reruns"), RerunRecord.from_json)),
                   flaky=newest_flaky(records(data.get("flaky"), FlakyRecord.from_json)))

    def merged_with(self, current: ForgeState) -> ForgeState:
        """Our state written over `current`, what the status comment holds now (another job may
        have written it since we read it): facts only ever added — CI verdicts, handled runs,
        resets, rolled-back attempts, handled commands — are kept from both, so the last writer
        no longer erases the other's; decisions are ours. Tokens: the larger count (two jobs
        that spent at the same moment are under-counted, never double-counted)."""
        runs = {**current.runs, **self.runs}
        while len(runs) > _MAX_RUNS:
            runs.pop(next(iter(runs)))
        seen_tried = {t.run for t in current.tried}
        return replace(
            self,
            fix_branch=self.fix_branch or current.fix_branch,
            source_branch=self.source_branch or current.source_branch,
            results={**current.results, **self.results}, after={**current.after, **self.after},
            runs=runs, resets=(*current.resets, *(r for r in self.resets if r not in current.resets)),
            escalation_posted=self.escalation_posted or current.escalation_posted,
            fixed=self.fixed or current.fixed, tokens=max(self.tokens, current.tokens),
            cost_usd=max(self.cost_usd, current.cost_usd), cost_base=max(self.cost_base, current.cost_base),
            tried=(*current.tried, *(t for t in self.tried if t.run not in seen_tried))[-_MAX_RUNS:],
            handled=tuple(dict.fromkeys((*current.handled, *self.handled)))[-_MAX_HANDLED:],
            command_times=tuple(sorted(set(current.command_times) | set(self.command_times)))[-_MAX_TIMES:],
            unverifiable=_merge_unverifiable(current.unverifiable, self.unverifiable),
            reruns=newest_reruns({**current.reruns, **{
                run: record for run, record in self.reruns.items()
                if record.concluded or run not in current.reruns}}),  # a conclusion is never undone
            flaky=newest_flaky({**current.flaky, **{
                test: record.merged_with(current.flaky[test]) if test in current.flaky else record
                for test, record in self.flaky.items()}}),
        )

    def standing_unverifiable(self, fingerprint: str, verify: str) -> Unverifiable | None:
        """The record that holds back a model call for this failure and verify command, if any."""
        return next((u for u in reversed(self.unverifiable) if not u.lifted and u.fingerprint == fingerprint
                     and u.verify == verify), None)

    def with_unverifiable(self, record: Unverifiable) -> ForgeState:
        return replace(self, unverifiable=(*self.unverifiable, record)[-_MAX_RUNS:])

    @property
    def branch_spent(self) -> float:
        """USD that counts against the fix branch cap: what was spent since the last reset."""
        return max(0.0, self.cost_usd - self.cost_base)

    def lift_cost_cap(self) -> ForgeState:
        """A green run or a writer's retry: the fix branch cap counts from here."""
        return replace(self, capped="", cost_base=self.cost_usd)

    def lift_unverifiable(self) -> ForgeState:
        """A green run or a writer's retry: every verify wall is worth another try."""
        return replace(self, unverifiable=tuple(replace(u, lifted=True) for u in self.unverifiable))

    def with_command(self, comment_id: int, when: float) -> ForgeState:
        return replace(self, handled=(*self.handled, comment_id)[-_MAX_HANDLED:],
                       command_times=(*self.command_times, when)[-_MAX_TIMES:])

    def with_rerun(self, run_id: str, record: RerunRecord) -> ForgeState:
        return replace(self, reruns=newest_reruns({**self.reruns, run_id: record}))

    def with_flaky(self, tests: tuple[str, ...], run_id: str) -> ForgeState:
        """One flaky verdict for each of `tests`, given by run `run_id` (counted once per run)."""
        flaky = dict(self.flaky)
        for test in dict.fromkeys(bounded(t) for t in tests):
            flaky[test] = flaky.get(test, FlakyRecord(0)).with_run(run_id)
        return replace(self, flaky=newest_flaky(flaky))

    def with_run(self, run_id: str, verdict: str) -> ForgeState:
        runs = dict(self.runs)
        runs[run_id] = verdict
        while len(runs) > _MAX_RUNS:
            runs.pop(next(iter(runs)))
        return replace(self, runs=runs)


def _merge_unverifiable(current: tuple[Unverifiable, ...], ours: tuple[Unverifiable, ...]
                        ) -> tuple[Unverifiable, ...]:
    """Both sides' records by run; a record lifted on either side stays lifted."""
    merged = {u.run: u for u in current}
    for u in ours:
        old = merged.get(u.run)
        merged[u.run] = replace(u, lifted=u.lifted or (old is not None and old.lifted))
    return tuple(merged.values())[-_MAX_RUNS:]


# --- the remote fix branch ------------------------------------------------------------------------

@dataclass(frozen=True)
class ChainLink:
    sha: str
    attempt: AttemptRecord | None  # None: a human commit (the walk stops there)

    @property
    def key(self) -> str:
        return (self.attempt.run if self.attempt else "") or self.sha


def remote_ref(fix_branch: str) -> str:
    return REMOTE_PREFIX + fix_branch


def fetch_fix_branch(repo: Path, fix_branch: str, remote: str = "origin") -> str | None:
    """The fix branch's tip on `remote`, fetched into `refs/ci-agent/remote/<branch>`; None (and the
    local copy dropped) when the remote has no such branch."""
    listed = git.git_ok(repo, ["ls-remote", remote, "refs/heads/" + fix_branch], timeout=120)
    local = remote_ref(fix_branch)
    if not listed.strip():
        if state.rev(repo, local) is not None:
            git.git(repo, ["update-ref", "-d", local])
        return None
    git.git_ok(repo, ["fetch", "--quiet", "--no-tags", remote,
                      f"+refs/heads/{fix_branch}:{local}"], timeout=300)
    return state.rev(repo, local)


def read_chain(repo: Path, tip: str | None) -> list[ChainLink]:
    """Our attempt commits from `tip` back to the first human commit (included), oldest first."""
    if tip is None:
        return []
    links: list[ChainLink] = []
    for sha, trailers in state._log(repo, ["--first-parent", tip]):
        attempt = state._attempt(trailers, AttemptResult.PENDING) if "ci-agent-attempt" in trailers else None
        if attempt is not None and not attempt.summary:
            # Published attempts say what they changed in their subject line (the model's summary).
            subject = git.git_ok(repo, ["log", "-1", "--format=%s", sha]).strip()
            attempt = replace(attempt, summary=subject[:200])
        links.append(ChainLink(sha, attempt))
        if attempt is None:
            break
    links.reverse()
    return links


def events(chain: list[ChainLink], marker: ForgeState) -> list[Event]:
    """Budget events, oldest first: each attempt with CI's verdict from the marker (pending when CI
    has not spoken), the human commit the walk stopped at as a reset, and recorded resets after
    the commit they were seen on."""
    if not chain:  # no fix branch yet: attempts rolled back on the source branch still count
        return [t.record() for t in marker.tried]
    found: list[Event] = []
    for link in chain:
        if link.attempt is None:
            found.append(Reset(ResetReason.HUMAN_COMMIT))
        else:
            record = replace(link.attempt, run=link.key)
            verdict = marker.results.get(link.key)
            if verdict in (AttemptResult.FAILED.value, AttemptResult.PASSED.value):
                record = replace(record, result=AttemptResult(verdict), after=marker.after.get(link.key, ""))
            found.append(record)
        found.extend(t.record() for t in marker.tried if t.head == link.sha)
        for reason, head in marker.resets:
            if head == link.sha:
                try:
                    found.append(Reset(ResetReason(reason)))
                except ValueError:
                    continue
    return found


# --- what a CI run on the fix branch tells us -----------------------------------------------------

@dataclass(frozen=True)
class Observation:
    verdict: str  # seen | stale | passed | failed | green | red
    state: ForgeState
    attempt: AttemptRecord | None = None  # the attempt the run decided

    @property
    def counts(self) -> bool:
        """The run changed the state (so the status comment must say so)."""
        return self.verdict not in ("seen", "stale")


def observe_run(marker: ForgeState, chain: list[ChainLink], run_id: str, head_sha: str, green: bool,
                fingerprint: str = "") -> Observation:
    """Fold one CI run on the fix branch into the state. Idempotent per run id: a rerun of a run
    already handled (same id, any attempt number) changes nothing; a run of an older commit than
    the branch tip is stale (a newer attempt is already waiting for its own run)."""
    if run_id and run_id in marker.runs:
        return Observation("seen", marker)
    tip = chain[-1] if chain else None
    if tip is None or (head_sha and head_sha != tip.sha):
        return Observation("stale", marker)
    new = marker
    attempt = tip.attempt
    if attempt is not None and tip.key not in marker.results:
        results, after = dict(marker.results), dict(marker.after)
        results[tip.key] = (AttemptResult.PASSED if green else AttemptResult.FAILED).value
        if not green and fingerprint:
            after[tip.key] = fingerprint
        new = replace(marker, results=results, after=after)
        verdict = "passed" if green else "failed"
    else:
        verdict = "green" if green else "red"
        if green:  # a green run on an already-decided or human commit: a new count
            new = replace(marker, resets=(*marker.resets, (ResetReason.GREEN_RUN.value, tip.sha)))
    if green:
        new = replace(new, fixed=tip.sha, escalated=False).lift_unverifiable().lift_cost_cap()
    return Observation(verdict, new.with_run(run_id, verdict) if run_id else new,
                       attempt if verdict in ("passed", "failed") else None)


def retry(marker: ForgeState, chain: list[ChainLink]) -> ForgeState:
    """A writer's `/ci-agent retry`: a new count from the current tip."""
    head = chain[-1].sha if chain else ""
    return replace(marker, resets=(*marker.resets, (ResetReason.RETRY.value, head)), escalated=False,
                   escalation_posted=False).lift_unverifiable().lift_cost_cap()
