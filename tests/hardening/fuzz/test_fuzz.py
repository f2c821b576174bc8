"""Every fuzz target, small: its real seeds, then EXAMPLES inputs from a fixed hypothesis seed.

The campaign (`bench/fuzz.py`) runs the same targets with thousands of inputs and atheris; here
each target must come out with no finding: no exception outside its documented error type, no
broken invariant. A target whose small run still reaches an open finding is xfail(strict=True)
naming it (test_findings.py holds the minimal input of each).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import pytest
from hypothesis import strategies as st

from tests.hardening.fuzz.campaign import run_hypothesis
from tests.hardening.fuzz.harness import Runner, Stats, Target, Violation, execute
from tests.hardening.fuzz.targets_forge import all_targets

EXAMPLES = 30
SEED = 8
TARGETS = all_targets()
OPEN: dict[str, str] = {}  # target -> the open finding its small run reaches


def _param(name: str) -> object:
    marks = [pytest.mark.xfail(strict=True, reason=OPEN[name])] if name in OPEN else []
    return pytest.param(name, marks=marks, id=name)


def _describe(stats: Stats) -> str:
    return "\n".join(f"{f.kind} at {f.where} ({f.count}x, smallest {f.size} B): {f.message[:200]}"
                     for f in stats.findings.values())


@pytest.mark.parametrize("name", [_param(n) for n in TARGETS])
def test_target_has_no_finding(name: str) -> None:
    stats = run_hypothesis(TARGETS[name], EXAMPLES, SEED)
    assert stats.tried >= EXAMPLES
    assert not stats.findings, _describe(stats)


def test_every_target_the_brief_names_is_fuzzed() -> None:
    from ci_agent.parsers import LOG_PARSERS, XML_PARSERS

    expected = {f"log.{n}" for n in LOG_PARSERS} | {f"xml.{n}" for n in XML_PARSERS} | {
        "log.sniffed", "envelope", "patch.review", "patch.apply", "slash", "marker", "relay.judge",
        "relay.http", "cienv.github", "cienv.gitlab"}
    assert {"trx", "junit", "nunit", "xunit"} <= set(XML_PARSERS)
    assert set(TARGETS) == expected


def test_every_target_has_real_seeds() -> None:
    for name, target in TARGETS.items():
        assert target.seeds(), f"{name} has no seed"


# --- the harness itself: a finding is found, located, deduplicated; a seed replays the same inputs ---

def _planted(data: bytes) -> None:
    if b"x" in data:
        raise KeyError("planted")
    if b"y" in data:
        raise Violation("planted invariant")


def _planted_target(allowed: tuple[type[BaseException], ...] = ()) -> Target:
    @contextlib.contextmanager
    def session() -> Iterator[Runner]:
        yield _planted
    return Target("planted", session, lambda: st.binary(min_size=1, max_size=8), lambda: (b"x", b"xx", b"y"),
                  allowed)


def test_the_harness_records_a_planted_bug_once_with_its_smallest_input() -> None:
    stats = run_hypothesis(_planted_target(), 0, SEED)
    assert stats.tried == 3
    kinds = {(f.kind, f.count, f.size) for f in stats.findings.values()}
    assert kinds == {("KeyError", 2, 1), ("Violation", 1, 1)}
    where = next(f.where for f in stats.findings.values() if f.kind == "KeyError")
    assert where.startswith("test_fuzz.py:")


def test_the_documented_error_type_is_no_finding() -> None:
    stats = Stats("planted")
    target = _planted_target(allowed=(KeyError,))
    execute(target, _planted, b"x", stats)
    assert not stats.findings


def test_a_seed_replays_the_same_inputs() -> None:
    seen: list[list[bytes]] = [[], []]
    for run in seen:
        @contextlib.contextmanager
        def session(run: list[bytes] = run) -> Iterator[Runner]:
            yield run.append
        target = Target("replay", session, TARGETS["slash"].strategy, lambda: ())
        run_hypothesis(target, 20, SEED)
    assert seen[0] == seen[1]
    assert len(set(seen[0])) > 10
