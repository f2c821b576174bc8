from __future__ import annotations


def format_elapsed(seconds: float) -> str:
    """Elapsed wall time for humans."""
    return f"{round(seconds)}s"


def format_ratio(part: int, whole: int) -> str:
    return "n/a" if whole == 0 else f"{part / whole:.0%}"
