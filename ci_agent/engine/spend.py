"""The day's spend of a repository (issue 16: `budget.max_cost_per_day_usd`), kept where the attempt
count lives: in git.

The ledger is the ref `refs/ci-agent/spend`, a commit whose tree holds one `<YYYY-MM-DD>.json` per
UTC day (`{"date", "spent_usd", "capped"}`; the last `KEEP_DAYS` days are kept). In CI it lives on
origin and is moved by a compare-and-swap push (`--force-with-lease` naming the tip the new commit
was built on): when another job moved it first the push is rejected, and the add is re-read and
retried, so two jobs adding at once lose no spend. `fix --local` keeps it as a local ref moved
compare-and-swap (`git update-ref <new> <old>`).

Reading is done before the first model call of a run; the run's spend is added after its last.
A ledger that cannot be read fails closed: the caller makes no model call while the day cap is
set (see `UNREADABLE`).
"""

from __future__ import annotations

import json
import math
import re
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from ci_agent import git
from ci_agent.errors import CiAgentError

SPEND_REF = "refs/ci-agent/spend"
FETCHED_REF = "refs/ci-agent/remote/spend"
KEEP_DAYS = 40
_TRIES = 8
_DAY_FILE = re.compile(r"\d{4}-\d{2}-\d{2}\.json")
UNREADABLE = ("the day's spend ledger ({ref}) could not be read ({why}), so the day cost cap "
              "cannot be checked and no model call was made; fix access to it, or set "
              "`budget.max_cost_per_day_usd: 0` in .ci-agent.yml to turn the day cap off")


class SpendLedgerError(CiAgentError):
    """The day ledger could not be read or written."""


@dataclass(frozen=True, slots=True)
class Day:
    date: str
    spent_usd: float = 0.0
    capped: bool = False  # the day cap stopped a run: no model call until the next UTC day

    def to_json(self) -> str:
        return json.dumps({"date": self.date, "spent_usd": round(self.spent_usd, 9),
                           "capped": self.capped}, sort_keys=True) + "\n"

    @classmethod
    def parse(cls, date: str, text: str) -> Day:
        """A file we cannot read is an error, never "nothing spent" (the caller fails closed)."""
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise SpendLedgerError(f"{date}.json is not JSON: {exc}") from exc
        spent = data.get("spent_usd") if isinstance(data, dict) else None
        if (isinstance(spent, bool) or not isinstance(spent, int | float) or not math.isfinite(spent)
                or spent < 0):
            raise SpendLedgerError(f"{date}.json has no readable spent_usd")
        return cls(date, float(spent), data.get("capped") is True)


def today(now: datetime | None = None) -> str:
    return (now or datetime.now(UTC)).astimezone(UTC).strftime("%Y-%m-%d")


class GitSpendLedger:
    """The day ledger in `repo`: on origin (`auth`: the `-c` options that authenticate the push)
    or, with `remote=False`, as a local ref of the user's repository."""

    def __init__(self, repo: Path, identity: git.Identity, *, remote: bool,
                 auth: list[str] | None = None) -> None:
        self.repo, self.identity, self.remote, self.auth = repo, identity, remote, auth or []

    def read(self, date: str) -> Day:
        return self._day(self._tip(), date)

    def add(self, date: str, amount: float, *, capped: bool = False) -> Day:
        """Add `amount` USD (and the cap mark) to `date`, re-reading and retrying when another
        writer moved the ledger first."""
        for _ in range(_TRIES):
            old = self._tip()
            before = self._day(old, date)
            day = Day(date, before.spent_usd + amount, before.capped or capped)
            new = self._commit(old, day)
            if self._swap(new, old):
                return day
        raise SpendLedgerError(f"{SPEND_REF} kept moving under us ({_TRIES} tries)")

    # --- git ---------------------------------------------------------------------------------

    def _git(self, args: list[str], stdin: str | None = None) -> str:
        try:
            return git.git_ok(self.repo, args, stdin=stdin, timeout=120)
        except git.GitError as exc:
            raise SpendLedgerError(str(exc)[:300]) from exc

    def _tip(self) -> str | None:
        if not self.remote:
            return _rev(self.repo, SPEND_REF)
        listed = git.git(self.repo, [*self.auth, "ls-remote", "origin", SPEND_REF], timeout=120)
        if not listed.ok:
            raise SpendLedgerError(f"cannot reach origin: {(listed.stderr or listed.stdout).strip()[:300]}")
        if not listed.stdout.strip():
            return None  # no ledger yet: nothing spent
        self._git([*self.auth, "fetch", "--quiet", "--no-tags", "origin", f"+{SPEND_REF}:{FETCHED_REF}"])
        return _rev(self.repo, FETCHED_REF)

    def _day(self, tip: str | None, date: str) -> Day:
        if tip is None:
            return Day(date)
        shown = git.git(self.repo, ["cat-file", "blob", f"{tip}:{date}.json"])
        return Day.parse(date, shown.stdout) if shown.ok else Day(date)

    def _commit(self, old: str | None, day: Day) -> str:
        blob = self._git(["hash-object", "-w", "--stdin"], stdin=day.to_json()).strip()
        entries = {}
        if old is not None:
            for line in self._git(["ls-tree", old]).splitlines():
                meta, _, name = line.partition("\t")
                if _DAY_FILE.fullmatch(name):
                    entries[name] = meta
        entries[f"{day.date}.json"] = f"100644 blob {blob}"
        kept = sorted(entries)[-KEEP_DAYS:]
        tree = self._git(["mktree"], stdin="".join(f"{entries[n]}\t{n}\n" for n in kept)).strip()
        env = {"GIT_AUTHOR_NAME": self.identity.name, "GIT_AUTHOR_EMAIL": self.identity.email,
               "GIT_COMMITTER_NAME": self.identity.name, "GIT_COMMITTER_EMAIL": self.identity.email}
        # a nonce: two jobs adding the same amount to the same tip in the same second would
        # otherwise build the same commit, and the second push would be "up to date", not refused
        message = f"ci-agent: spend on {day.date}\n\nCI-Agent-Spend-Id: {uuid.uuid4().hex}"
        args = ["commit-tree", tree, *(["-p", old] if old else []), "-m", message]
        try:
            return git.git_ok(self.repo, args, env=env).strip()
        except git.GitError as exc:
            raise SpendLedgerError(str(exc)[:300]) from exc

    def _swap(self, new: str, old: str | None) -> bool:
        if not self.remote:
            return git.git(self.repo, ["update-ref", SPEND_REF, new, old or "0" * 40]).ok
        # compare-and-swap on origin: git checks no fast-forward for refs outside refs/heads, so
        # the lease (origin's ref must still be `old`, or absent) is what keeps another job's add
        lease = f"--force-with-lease={SPEND_REF}:{old or ''}"
        pushed = git.git(self.repo, [*self.auth, "push", "--porcelain", lease, "origin",
                                     f"{new}:{SPEND_REF}"],
                         timeout=120)
        if pushed.ok:
            return True
        text = pushed.stdout + pushed.stderr
        if "rejected" in text or "stale info" in text or "fetch first" in text:
            return False  # another writer was first: re-read and retry
        raise SpendLedgerError(f"cannot push {SPEND_REF}: {text.strip()[:300]}")


def _rev(repo: Path, ref: str) -> str | None:
    result = git.git(repo, ["rev-parse", "--verify", "--quiet", ref + "^{commit}"])
    return result.stdout.strip() if result.ok and result.stdout.strip() else None
