from __future__ import annotations

from dataclasses import dataclass

from jobrunner.durations import parse_duration


@dataclass(frozen=True)
class JobSettings:
    name: str
    timeout_s: int
    retry_delay_s: int


def from_mapping(raw: dict[str, str]) -> JobSettings:
    return JobSettings(
        name=raw["name"],
        timeout_s=parse_duration(raw.get("timeout", "10m")),
        retry_delay_s=parse_duration(raw.get("retry_delay", "30")),
    )
