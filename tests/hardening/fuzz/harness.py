"""What a fuzz target is, how one input is run against it, and what a campaign records.

A target turns bytes into one call of ci-agent code and checks the result's contract. An input
is a FINDING when the call raises anything but the target's documented error type, or breaks an
invariant the target checks (`Violation`), or (in a campaign with a hang limit) runs past it.
Findings are keyed by exception type and the innermost ci_agent frame, so ten thousand inputs
hitting one bug make one finding, with the smallest input that reached it kept.
"""

from __future__ import annotations

import contextlib
import hashlib
import signal
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from types import FrameType, TracebackType
from typing import Any

from hypothesis import strategies as st

Runner = Callable[[bytes], None]


class Violation(AssertionError):
    """An invariant of the target's contract broke (not an exception of the code under test)."""


class Hang(Exception):
    """The input ran longer than the campaign's per-input limit."""


@dataclass
class Target:
    name: str
    session: Callable[[], contextlib.AbstractContextManager[Runner]]
    strategy: Callable[[], st.SearchStrategy[bytes]]
    seeds: Callable[[], tuple[bytes, ...]]
    allowed: tuple[type[BaseException], ...] = ()
    what: str = ""  # the ci-agent entry point(s), for the report


def stateless(run: Runner) -> Callable[[], contextlib.AbstractContextManager[Runner]]:
    @contextlib.contextmanager
    def session() -> Iterator[Runner]:
        yield run
    return session


@dataclass
class Finding:
    kind: str
    where: str
    message: str
    size: int
    sha: str
    data: bytes
    count: int = 1

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "where": self.where, "message": self.message, "size": self.size,
                "sha1": self.sha, "count": self.count}


@dataclass
class Stats:
    target: str
    tried: int = 0
    max_size: int = 0
    slowest_s: float = 0.0
    slowest_size: int = 0
    slowest_sha: str = ""
    total_s: float = 0.0
    findings: dict[tuple[str, str], Finding] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"target": self.target, "tried": self.tried, "max_size": self.max_size,
                "slowest_s": round(self.slowest_s, 4), "slowest_size": self.slowest_size,
                "slowest_sha1": self.slowest_sha, "total_s": round(self.total_s, 2),
                "unexpected": sum(f.count for f in self.findings.values()),
                "findings": [f.to_json() for f in self.findings.values()]}


def innermost(tb: TracebackType | None) -> str:
    """`ci_agent/x.py:LINE` of the deepest ci_agent frame (else the deepest frame)."""
    frames = list(traceback.extract_tb(tb))
    ours = [f for f in frames if "/ci_agent/" in f.filename]
    if not (ours or frames):
        return "?"
    frame = (ours or frames)[-1]
    name = frame.filename
    cut = name.rfind("/ci_agent/")
    return f"{name[cut + 1:] if cut >= 0 else name.rsplit('/', 1)[-1]}:{frame.lineno}"


def _sha(data: bytes) -> str:
    return hashlib.sha1(data).hexdigest()[:12]


def record(stats: Stats, data: bytes, exc: BaseException) -> Finding:
    kind = type(exc).__name__
    where = f"invariant: {str(exc)[:60]}" if isinstance(exc, Violation) else innermost(exc.__traceback__)
    key = (kind, where)
    found = stats.findings.get(key)
    if found is None:
        found = stats.findings[key] = Finding(kind, where, str(exc)[:300], len(data), _sha(data), data, 0)
    found.count += 1
    if len(data) < found.size:
        found.size, found.sha, found.data = len(data), _sha(data), data
    return found


def _alarm(_signum: int, _frame: FrameType | None) -> None:
    raise Hang("the input ran past the per-input limit")


def execute(target: Target, run: Runner, data: bytes, stats: Stats, hang_s: float = 0.0) -> Finding | None:
    """Run one input; count it; return the finding it made, if any. `hang_s` > 0 arms SIGALRM
    (main thread only: campaigns, never tests)."""
    stats.tried += 1
    stats.max_size = max(stats.max_size, len(data))
    if hang_s:
        signal.signal(signal.SIGALRM, _alarm)
        signal.setitimer(signal.ITIMER_REAL, hang_s)
    started = time.perf_counter()
    finding = None
    try:
        run(data)
    except target.allowed:
        pass
    except Exception as exc:  # every other exception is what the campaign is looking for
        finding = record(stats, data, exc)
    finally:
        if hang_s:
            signal.setitimer(signal.ITIMER_REAL, 0)
        spent = time.perf_counter() - started
        stats.total_s += spent
        if spent > stats.slowest_s:
            stats.slowest_s, stats.slowest_size, stats.slowest_sha = spent, len(data), _sha(data)
    return finding
