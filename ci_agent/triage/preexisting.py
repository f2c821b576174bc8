"""Is this change's failure already red on the default branch? (issue 16, `pre_existing`)

`compare(ours, theirs)` matches failures by identity, never by a message's exact text:
- a failed test by its class and name, blanks collapsed and ids, times and temp paths replaced
  (`cluster.normalise`, as clusters are keyed), so a data row's GUID or timestamp does not count;
- an error diagnostic by its file (repo-relative; outside the repository its last two parts, as
  the budget's fingerprint keys it), its code (or the tool that printed it) and its message with
  directories dropped and numbers replaced: the default branch is another commit, its lines moved;
- a run error (a damaged result file, a log in no format we read) by its first line, normalised
  the same way. It takes part in "every failure of ours is red there", but a match of run errors
  alone proves nothing (every job log is "not a format ci-agent reads" on both sides), so at least
  one test or diagnostic must match for a verdict.

Every failure of ours also red there: a `pre_existing` Verdict (no patch). Some: a
`PartialOverlap` naming them, so the cycle tells the model and the status comment "these also
fail on <default>" and fixes the rest. None: nothing (`None`). Pure: no I/O, no clock.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ci_agent.cluster import normalise
from ci_agent.report import Report, Severity
from ci_agent.triage import Verdict

MAX_NAMED = 20  # failures named in a verdict's evidence and tests; the reason says how many in all
MAX_SHOWN_CHARS = 300  # one shown failure (a hostile megabyte-long test name stays one line)

# The directory part of any path (absolute or relative, POSIX or Windows): `/tmp/wt-1/src/a.h`
# and `src/a.h` both leave `a.h` (the budget's fingerprint drops them the same way).
_DIRECTORIES = re.compile(r"(?:\b[A-Za-z]:)?[^\s:'\"()<>\[\]]*[\\/]")
# A number standing alone (`line 42`, `:12:3`), not one inside a word or code (`CS0103`, `int32`).
_NUMBER = re.compile(r"(?<![\w.])[-+]?\d+(?:\.\d+)*(?!\w)")
_BLANKS = re.compile(r"\s+")

Identity = tuple[str, str, str, str]


@dataclass(frozen=True, slots=True)
class Failure:
    """One failure of a report as compared: its identity, how a person reads it, and the test's
    name when it is a failed test."""

    identity: Identity
    shown: str
    test: str | None = None

    @property
    def decisive(self) -> bool:
        """A test or a diagnostic: a match of one says which failure it is (a run error does not)."""
        return self.identity[0] != "run"


@dataclass(frozen=True, slots=True)
class PartialOverlap:
    """Some, not all, of this change's failures also fail on the default branch (`where`): those
    (`shared`, at most MAX_NAMED shown; `tests` the tests among them) are not this change's; the
    others (`new_count`) are, and the attempt goes on for them."""

    where: str
    shared: tuple[str, ...]
    tests: tuple[str, ...]
    shared_count: int
    new_count: int

    def sentence(self) -> str:
        """One line for the status comment and the model (the names are untrusted text)."""
        unnamed = self.shared_count - len(self.shared)
        more = f" and {unnamed} more" if unnamed > 0 else ""
        return (f"{self.shared_count} of {self.shared_count + self.new_count} failures also fail on "
                f"{self.where}, so this change did not cause them: " + "; ".join(self.shared) + more)


def _one_line(text: str) -> str:
    return _BLANKS.sub(" ", text).strip()


def _shown(text: str) -> str:
    line = _one_line(text)
    return line if len(line) <= MAX_SHOWN_CHARS else line[:MAX_SHOWN_CHARS - 1] + "…"


def message_key(message: str | None) -> str:
    """A message as compared: directories dropped, lone numbers replaced, blanks collapsed."""
    return _one_line(_NUMBER.sub("#", _DIRECTORIES.sub("", message or "")))


def test_key(name: str, classname: str | None = None) -> str:
    """A test's name as compared: `cluster.normalise` without values (ids, times and temp paths
    replaced, numbers and quoted values kept: `test_add[2]` and `test_add[3]` are two tests)."""
    qualified = f"{classname}::{name}" if classname and not name.startswith(classname) else name
    return normalise(qualified, values=False)


def _file_key(path: str | None, in_repo: bool) -> str:
    if not path:
        return ""
    path = path.replace("\\", "/")
    return path if in_repo else "/".join(path.rstrip("/").split("/")[-2:])


def failures(report: Report) -> dict[Identity, Failure]:
    """What is red in `report`, by identity (the first of several with one identity is kept)."""
    found: dict[Identity, Failure] = {}
    for f in report.failures:
        if f.outcome.is_failure:
            identity = ("test", test_key(f.name, f.classname), "", "")
            found.setdefault(identity, Failure(identity, _shown(f.name), f.name[:MAX_SHOWN_CHARS * 2]))
    for d in report.diagnostics:
        if d.severity is Severity.ERROR:
            identity = ("diag", _file_key(d.file, d.in_repo), d.code or d.origin or "",
                        message_key(d.message))
            where = f"{d.file}: " if d.file else ""
            found.setdefault(identity, Failure(identity, _shown(f"{where}{d.code or ''} {d.message}")))
    for e in report.run_errors:
        first = e.message.splitlines()[0] if e.message else ""
        identity = ("run", "", "", message_key(first))
        found.setdefault(identity, Failure(identity, _shown(first)))
    return found


def compare(ours: Report, theirs: Report, *, where: str = "the default branch"
            ) -> Verdict | PartialOverlap | None:
    """`pre_existing` when every failure of `ours` is also red in `theirs` (the default branch's
    latest run, named by `where` in the sentences) and one of them is a test or a diagnostic; a
    `PartialOverlap` when only some tests or diagnostics are; None otherwise."""
    mine = failures(ours)
    red_there = failures(theirs).keys()
    shared = [f for key, f in mine.items() if key in red_there]
    if not any(f.decisive for f in shared):
        return None
    named = [f.shown for f in shared if f.decisive][:MAX_NAMED]
    tests = tuple(f.test for f in shared if f.test is not None)[:MAX_NAMED]
    if len(shared) == len(mine):
        count = len(shared)
        reason = (f"{'The failure' if count == 1 else f'All {count} failures'} here also "
                  f"{'fails' if count == 1 else 'fail'} on {where}: this change did not cause "
                  f"{'it' if count == 1 else 'them'}")
        return Verdict("pre_existing", reason, tuple(named), tests)
    decisive_shared = sum(1 for f in shared if f.decisive)
    return PartialOverlap(where, tuple(named), tests, decisive_shared, len(mine) - len(shared))
