"""Parse human durations such as "90s", "15m", "2h" or "1d" into seconds."""

from __future__ import annotations

import re

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_PATTERN = re.compile(r"^\s*(\d+)\s*([smhd]?)\s*$")


def parse_duration(text: str) -> int:
    match = _PATTERN.match(text)
    if match is None:
        raise ValueError(f"not a duration: {text!r}")
    amount, unit = match.groups()
    return int(amount) * _UNITS[unit or "s"]
