"""Run one target: its seeds first, then `examples` hypothesis inputs from a recorded seed.

Shared by the tests (small counts) and `bench/fuzz.py` (the campaign). Hypothesis only generates
here: every exception is caught and recorded by `execute`, so nothing fails inside hypothesis and
nothing is shrunk; the smallest input per finding is kept instead.
"""

from __future__ import annotations

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hypothesis_seed

from tests.hardening.fuzz.harness import Stats, Target, Violation, execute, record


def run_hypothesis(target: Target, examples: int, seed: int, hang_s: float = 0.0,
                   with_seeds: bool = True) -> Stats:
    stats = Stats(target.name)
    try:
        with target.session() as run:
            if with_seeds:
                for data in target.seeds():
                    execute(target, run, data, stats, hang_s)

            if examples > 0:
                @hypothesis_seed(seed)
                @settings(max_examples=examples, database=None, deadline=None, derandomize=False,
                          phases=[Phase.generate], suppress_health_check=list(HealthCheck))
                @given(target.strategy())
                def one(data: bytes) -> None:
                    execute(target, run, data, stats, hang_s)

                one()
    except Violation as exc:  # a check made when the session closes (the patch repo changed)
        record(stats, b"", exc)
    return stats
