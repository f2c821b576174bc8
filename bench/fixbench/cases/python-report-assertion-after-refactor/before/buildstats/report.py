from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from buildstats.fmt import format_elapsed, format_ratio


@dataclass(frozen=True)
class Step:
    name: str
    seconds: float
    cached: bool


def summary(steps: Sequence[Step]) -> list[str]:
    total = sum(step.seconds for step in steps)
    cached = sum(1 for step in steps if step.cached)
    lines = [f"{step.name:<8} {format_elapsed(step.seconds):>8}" for step in steps]
    lines.append(f"total    {format_elapsed(total):>8}  (cache hits {format_ratio(cached, len(steps))})")
    return lines
