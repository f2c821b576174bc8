"""Local durable state of `fix --local`: the fix branch, its worktree, and the attempt record.

- The fix branch `ci-agent/fix/<sanitised source branch>` holds every published attempt as a
  commit with `CI-Agent-*` trailers. It is built in a detached git worktree under
  `<git common dir>/ci-agent/worktrees/`, so the user's working copy and index are never touched.
- A failed (rolled-back) attempt, a green run and a retry are commits on the side ref
  `refs/ci-agent/attempts/<fix branch>`: the tree of the fix-branch commit it was tried on (no
  change), trailers only, `CI-Agent-Head` naming that commit. They survive reruns.
- Every ref moves with `git update-ref REF NEW OLD` (compare-and-swap): two invocations at once
  can neither lose an attempt nor count one twice; the loser re-reads and tries again.
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from ci_agent import git
from ci_agent.engine.budget import AttemptRecord, AttemptResult, Event, Reset, ResetReason
from ci_agent.errors import CiAgentError

FIX_PREFIX = "ci-agent/fix/"
ATTEMPTS_PREFIX = "refs/ci-agent/attempts/"
_CAS_TRIES = 8
_WALK_LIMIT = 500  # attempt commits or records read back; far beyond any real budget


class StateError(CiAgentError):
    """The fix branch or the attempt record cannot be used as it is (message says why)."""


class ConflictError(StateError):
    """Another invocation moved the ref first."""


# --- names ------------------------------------------------------------------------------------

_BAD_CHARS = re.compile(r"[^A-Za-z0-9._/-]+")


def sanitise_branch(source: str) -> str:
    """A source branch name made safe as a ref path component (`git check-ref-format` rules):
    only `[A-Za-z0-9._/-]`, no `..`, no component starting with `.` or ending with `.lock`, no
    empty components, at most 100 characters."""
    name = _BAD_CHARS.sub("-", source.strip())
    name = re.sub(r"\.{2,}", ".", name)
    parts = []
    for part in name.split("/"):
        part = part.strip(".-")
        while part.endswith(".lock"):
            part = part[: -len(".lock")].rstrip(".-")
        if part:
            parts.append(re.sub(r"-{2,}", "-", part))
    name = "/".join(parts)[:100].strip("/.-")
    return name or "branch"


def fix_branch_for(source: str) -> str:
    return FIX_PREFIX + sanitise_branch(source)


def attempts_ref(fix_branch: str) -> str:
    return ATTEMPTS_PREFIX + fix_branch


def current_branch(repo: Path) -> str | None:
    result = git.git(repo, ["symbolic-ref", "--quiet", "--short", "HEAD"])
    return (result.stdout.strip() or None) if result.ok else None


def rev(repo: Path, ref: str) -> str | None:
    result = git.git(repo, ["rev-parse", "--verify", "--quiet", ref + "^{commit}"])
    return (result.stdout.strip() or None) if result.ok else None


def _is_ancestor(repo: Path, older: str, newer: str) -> bool:
    return git.git(repo, ["merge-base", "--is-ancestor", older, newer]).returncode == 0


def compare_and_swap(repo: Path, ref: str, new: str | None, old: str | None) -> None:
    """Move `ref` from `old` (None: must not exist) to `new` (None: delete); ConflictError when
    someone else moved it first."""
    zero = "0" * 40
    args = ["update-ref", "-d", ref, old or zero] if new is None else ["update-ref", ref, new, old or zero]
    result = git.git(repo, args)
    if not result.ok:
        raise ConflictError(f"{ref} moved while we worked: {result.stderr.strip()}")


# --- the fix branch ---------------------------------------------------------------------------

def prepare_fix_branch(repo: Path, source_ref: str, fix_branch: str) -> str:
    """Make sure `fix_branch` exists and contains the source; return its tip.

    New branch: created at the source tip (and any attempt record of an earlier, deleted branch
    of that name is dropped: deleting the branch is how a person starts over). Source moved on
    past the fix branch: fast-forwarded (the new commits are human commits: a new count).
    Diverged: refused, since either choice would throw someone's commits away.
    """
    source_tip = rev(repo, source_ref)
    if source_tip is None:
        raise StateError(f"{source_ref} does not name a commit")
    ref = "refs/heads/" + fix_branch
    for _ in range(_CAS_TRIES):
        tip = rev(repo, ref)
        try:
            if tip is None:
                compare_and_swap(repo, ref, source_tip, None)
                old_record = rev(repo, attempts_ref(fix_branch))
                if old_record is not None:
                    compare_and_swap(repo, attempts_ref(fix_branch), None, old_record)
                return source_tip
            if _is_ancestor(repo, source_tip, tip):
                return tip
            if _is_ancestor(repo, tip, source_tip):
                compare_and_swap(repo, ref, source_tip, tip)
                return source_tip
        except ConflictError:
            continue
        raise StateError(
            f"{fix_branch} and {source_ref} have diverged; merge {source_ref} into {fix_branch} "
            f"or delete it (git branch -D {fix_branch}) to start over")
    raise StateError(f"{fix_branch} keeps moving under us; is another ci-agent running?")


def publish(repo: Path, fix_branch: str, commit: str, expected_tip: str) -> None:
    """Point the fix branch at `commit`, only if it is still at `expected_tip`."""
    try:
        compare_and_swap(repo, "refs/heads/" + fix_branch, commit, expected_tip)
    except ConflictError as exc:
        raise StateError(f"{fix_branch} moved while this attempt ran (another ci-agent?); the "
                         f"attempt stays as commit {commit[:12]} but was not published") from exc


@contextmanager
def worktree(repo: Path, commit: str, *, keep: bool = False) -> Iterator[Path]:
    """A detached worktree at `commit` under `<git common dir>/ci-agent/worktrees/`, removed on
    exit unless `keep`. Detached, so two invocations never fight over a checked-out branch."""
    common = Path(repo, git.git_ok(repo, ["rev-parse", "--git-common-dir"]).strip())
    base = common / "ci-agent" / "worktrees"
    base.mkdir(parents=True, exist_ok=True)
    path = Path(tempfile.mkdtemp(prefix="fix-", dir=base))
    git.git_ok(repo, ["worktree", "add", "--quiet", "--detach", str(path), commit], timeout=300)
    try:
        yield path
    finally:
        if not keep:
            git.git(repo, ["worktree", "remove", "--force", str(path)], timeout=120)
            if path.exists():  # worktree remove refused (e.g. a file held open): leave no admin entry
                git.git(repo, ["worktree", "prune"])


# --- reading the record -----------------------------------------------------------------------

_TRAILER = re.compile(r"^(CI-Agent-[A-Za-z-]+):\s*(.*)$", re.I)


def _trailers(text: str) -> dict[str, str]:
    found: dict[str, str] = {}
    for line in text.splitlines():
        match = _TRAILER.match(line.strip())
        if match:
            found[match.group(1).lower()] = match.group(2).strip()
    return found


def _log(repo: Path, args: list[str]) -> list[tuple[str, dict[str, str]]]:
    """(commit, its CI-Agent trailers), newest first."""
    out = git.git_ok(repo, ["log", "-z", f"-n{_WALK_LIMIT}",
                            "--format=%H%n%(trailers:only=true,unfold=true)", *args])
    entries = []
    for chunk in out.split("\0"):
        chunk = chunk.strip("\n")
        if chunk:
            sha, _, rest = chunk.partition("\n")
            entries.append((sha.strip(), _trailers(rest)))
    return entries


def _attempt(trailers: dict[str, str], default: AttemptResult) -> AttemptRecord | None:
    try:
        number = int(trailers.get("ci-agent-attempt", ""))
    except ValueError:
        return None
    try:
        result = AttemptResult(trailers.get("ci-agent-result", default.value))
    except ValueError:
        result = default
    return AttemptRecord(number, result, trailers.get("ci-agent-failure", ""),
                         trailers.get("ci-agent-failure-after", ""), trailers.get("ci-agent-run", ""),
                         trailers.get("ci-agent-summary", ""))


def _record_event(trailers: dict[str, str]) -> Event | None:
    reason = trailers.get("ci-agent-reset")
    if reason is not None:
        try:
            return Reset(ResetReason(reason))
        except ValueError:
            return None
    return _attempt(trailers, AttemptResult.FAILED)


def chain_events(repo: Path, fix_branch: str) -> list[tuple[str, Event]]:
    """The fix branch from its last human commit (a reset) to the tip, oldest first: each commit
    with the event it is (our commits carry their attempt's trailers, pending unless they say)."""
    tip = rev(repo, "refs/heads/" + fix_branch)
    if tip is None:
        return []
    chain: list[tuple[str, Event]] = []
    for sha, trailers in _log(repo, ["--first-parent", tip]):
        attempt = _attempt(trailers, AttemptResult.PENDING) if "ci-agent-attempt" in trailers else None
        if attempt is None:
            chain.append((sha, Reset(ResetReason.HUMAN_COMMIT)))
            break
        chain.append((sha, attempt))
    chain.reverse()
    return chain


def attach(chain: list[tuple[str, Event]], records: Iterable[tuple[str, Event]]) -> list[Event]:
    """The chain's events, each commit followed by the records (head, event) tried on it, in
    record order; records on commits outside the chain (an older count) are left out."""
    tried_on: dict[str, list[Event]] = {sha: [] for sha, _ in chain}
    for head, event in records:
        if head in tried_on:
            tried_on[head].append(event)
    events: list[Event] = []
    for sha, event in chain:
        events.append(event)
        events.extend(tried_on[sha])
    return events


def side_records(repo: Path, fix_branch: str) -> list[tuple[str, Event]]:
    """The records of the side ref `refs/ci-agent/attempts/<fix branch>`, oldest first."""
    record = rev(repo, attempts_ref(fix_branch))
    if record is None:
        return []
    found: list[tuple[str, Event]] = []
    for _, trailers in reversed(_log(repo, ["--first-parent", record])):
        event = _record_event(trailers)
        if event is not None:
            found.append((trailers.get("ci-agent-head", ""), event))
    return found


def read_events(repo: Path, fix_branch: str) -> list[Event]:
    """The events since the last human commit on the fix branch, oldest first: that commit (a
    reset), then each of our commits, each followed by the records tried on it."""
    chain = chain_events(repo, fix_branch)
    return attach(chain, side_records(repo, fix_branch)) if chain else []


def already_recorded(event: Event, events: list[Event]) -> bool:
    """The attempt is there under its id already (a rerun re-recording it): nothing to write."""
    return isinstance(event, AttemptRecord) and bool(event.run) and any(
        isinstance(e, AttemptRecord) and e.run == event.run for e in events)


# --- writing the record -----------------------------------------------------------------------

def trailer_lines(event: Event, head: str) -> list[tuple[str, str]]:
    if isinstance(event, Reset):
        return [("CI-Agent-Reset", event.reason.value), ("CI-Agent-Head", head)]
    pairs = [("CI-Agent-Attempt", str(event.number)), ("CI-Agent-Result", event.result.value)]
    if event.fingerprint:
        pairs.append(("CI-Agent-Failure", event.fingerprint))
    if event.after:
        pairs.append(("CI-Agent-Failure-After", event.after))
    if event.run:
        pairs.append(("CI-Agent-Run", event.run))
    if event.summary:
        pairs.append(("CI-Agent-Summary", " ".join(event.summary.split())[:200]))
    pairs.append(("CI-Agent-Head", head))
    return pairs


def _subject(event: Event) -> str:
    if isinstance(event, Reset):
        return f"ci-agent: new count ({event.reason.value})"
    return f"ci-agent: attempt {event.number} {event.result.value}"


@dataclass(frozen=True, slots=True)
class Recorded:
    event: Event
    commit: str
    already: bool = False  # it was there before us (a rerun): nothing written


def record(repo: Path, fix_branch: str, head: str, build: Callable[[list[Event]], Event],
           identity: git.Identity) -> Recorded:
    """Append the event `build(current events)` to the side ref, compare-and-swap, re-reading
    and rebuilding when another invocation got there first (so its number stays right)."""
    ref = attempts_ref(fix_branch)
    tree = git.git_ok(repo, ["rev-parse", head + "^{tree}"]).strip()
    env = {"GIT_AUTHOR_NAME": identity.name, "GIT_AUTHOR_EMAIL": identity.email,
           "GIT_COMMITTER_NAME": identity.name, "GIT_COMMITTER_EMAIL": identity.email}
    for _ in range(_CAS_TRIES):
        old = rev(repo, ref)
        events = read_events(repo, fix_branch)
        event = build(events)
        if already_recorded(event, events):
            return Recorded(event, old or "", already=True)
        message = git.add_trailers(repo, _subject(event) + "\n", trailer_lines(event, head))
        args = ["commit-tree", tree] + (["-p", old] if old else []) + ["-F", "-"]
        commit = git.git_ok(repo, args, stdin=message, env=env).strip()
        try:
            compare_and_swap(repo, ref, commit, old)
        except ConflictError:
            continue
        return Recorded(event, commit)
    raise StateError(f"{ref} keeps moving under us; is another ci-agent running?")
