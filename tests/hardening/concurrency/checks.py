"""What must hold after every race, on either forge (ISSUE 8 "Concurrency", DESIGN.md §4.3):
one open fix PR/MR, one status comment/note of ours on it, each attempt pushed once and counted
once (the commits' `CI-Agent-Attempt` trailers, the marker's runs and the budget ci-agent itself
computes from both agree), no push that dropped anyone's commit, and every job either did the
work or said clearly that another job (or a person) got there first."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ci_agent.engine.budget import assess
from ci_agent.engine.forge import parse_marker
from ci_agent.engine.marker import ForgeState, events, read_chain
from tests.hardening.concurrency.races import JobResult, RefLog, is_ancestor, record
from tests.scenarios.sample_repos import git

FIX_BRANCH = "ci-agent/fix/main"


@dataclass(frozen=True)
class Forge:
    """The few reads the checks need, over the GitHub or the GitLab scenario world."""

    origin: Path
    open_fix_requests: Callable[[], list[int]]
    status_bodies: Callable[[int], list[str]]  # bodies of ours that carry the marker
    escalations: Callable[[int], list[str]]
    trailers: Callable[[str], dict[str, list[str]]]  # of a commit of origin (the world's reader)
    branch: str = FIX_BRANCH


def attempt_numbers(forge: Forge, base: str) -> list[str]:
    """The `CI-Agent-Attempt` trailer of each commit on the fix branch after `base`, oldest first
    ("" for a person's commit)."""
    commits = git(forge.origin, "rev-list", "--reverse", f"{base}..refs/heads/{forge.branch}").split()
    return [(forge.trailers(c).get("CI-Agent-Attempt") or [""])[0] for c in commits]


def check_race(forge: Forge, reflog: RefLog, results: Sequence[JobResult], *, base: str,
               attempts: list[str], kind: str, schedule: str, keep: Sequence[str] = (),
               won: Sequence[str] = ("committed", "fixed"), exits: Sequence[int] = (0,),
               **facts: Any) -> None:
    """Assert every invariant; `attempts` is the expected trailer list after `base` ("" = a
    person's commit), `keep` the commits (a person's, another job's) that must still be there,
    `won` the outcomes of a job that did the work, `exits` the exit codes a job may end with."""
    verdict = "ok"
    try:
        facts["marker_runs"] = _check(forge, reflog, results, base, attempts, keep, set(won), set(exits))
    except AssertionError as error:
        verdict = f"violated: {str(error).splitlines()[0][:160]}"
        raise
    finally:
        record(kind, schedule, list(results), verdict, **facts)


def _check(forge: Forge, reflog: RefLog, results: Sequence[JobResult], base: str, attempts: list[str],
           keep: Sequence[str], won: set[str], exits: set[int]) -> dict[str, str]:
    """The checks; returns the marker's record of the runs it handled (for the figure)."""
    every = "\n\n".join(map(str, results))
    for result in results:
        assert result.exit_code in exits, every
        assert "Traceback" not in result.stderr, every
        assert result.outcome in won or result.said_it_lost(), \
            f"[{result.label}] neither did the work nor said who did:\n{every}"
    origin, branch = forge.origin, forge.branch
    ref = f"refs/heads/{branch}"
    assert reflog.rewrites(ref) == [], f"a push dropped commits of {branch}: {reflog.rewrites(ref)}"
    found = attempt_numbers(forge, base)
    assert found == attempts, f"attempt trailers on {branch}: {found}, expected {attempts}\n{every}"
    pushed = [u for u in reflog.updates(ref) if u.new != "0" * 40]
    ours = [a for a in attempts if a]
    assert len(pushed) == len(attempts), f"{len(pushed)} pushes for {len(attempts)} commits: each once"
    tip = git(origin, "rev-parse", ref).strip()
    for commit in keep:
        assert is_ancestor(origin, commit, tip), f"{commit[:12]} is no longer on {branch}"
    open_requests = forge.open_fix_requests()
    assert len(open_requests) == 1, f"open fix change requests: {open_requests}\n{every}"
    (number,) = open_requests
    bodies = forge.status_bodies(number)
    assert len(bodies) == 1, f"{len(bodies)} status comments of ours on the fix change request #{number}"
    assert len(forge.escalations(number)) <= 1, "one escalation comment at most"
    marker = ForgeState.from_json(parse_marker(bodies[0]))
    budget = assess(events(read_chain(origin, tip), marker), 3)
    # attempts since the last person's commit, each counted once
    since_person = len(attempts) - (max(i for i, a in enumerate(attempts) if not a) + 1
                                    if "" in attempts else 0)
    assert budget.consecutive_failures == since_person, (budget, attempts)
    claimed = {v.removeprefix("attempt ").strip() for v in marker.runs.values() if v.startswith("attempt ")}
    assert claimed <= set(ours), f"the marker counts attempts {claimed} the branch does not hold {ours}"
    return dict(marker.runs)
