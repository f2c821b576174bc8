"""Fitting rendered items into a byte budget without ever dropping one silently.

Items are taken in priority order (sections in order, items in order) while the text, plus an
`... N more X omitted` line for every section that lost items, still fits. Sizes are UTF-8
bytes. The result never exceeds the budget: if even the head and the omission lines do not
fit, the text is cut at a character boundary (only possible with absurdly small budgets).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

_UNSAFE_CHARS_RE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u200b-\u200f\u202a-\u202e\u2060-\u2064\ufeff]"
)


def clean(text: str) -> str:
    """Drop control and invisible characters (keeps TAB and newlines) from untrusted text."""
    return _UNSAFE_CHARS_RE.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))


def size(text: str) -> int:
    # `replace`: a lone surrogate (undecodable input) is written as `?` by write_stdout too.
    return len(text.encode("utf-8", errors="replace"))


def shorten(text: str, max_chars: int, max_lines: int | None = None) -> str:
    """`text` cut to `max_chars` / `max_lines`, saying how much was cut."""
    lines = text.split("\n")
    cut_lines = 0
    if max_lines is not None and len(lines) > max_lines:
        cut_lines = len(lines) - max_lines
        text = "\n".join(lines[:max_lines])
    cut_chars = 0
    if len(text) > max_chars:
        cut_chars = len(text) - max_chars
        text = text[:max_chars].rstrip()
    if cut_lines:
        return f"{text} [... {cut_lines} more lines cut]"
    if cut_chars:
        return f"{text} [... {cut_chars} more chars cut]"
    return text


def cut_to_bytes(text: str, budget: int) -> str:
    data = text.encode("utf-8", errors="replace")
    if len(data) <= budget:
        return text
    return data[: max(budget, 0)].decode("utf-8", errors="ignore")


@dataclass(slots=True)
class Section:
    title: str  # printed (with its newline) before the section's first included item
    items: list[str] = field(default_factory=list)  # each already ends with a newline
    noun: str = "items"  # "errors", "warnings", "failed tests": used in the omission line
    weights: list[int] | None = None  # how many things each item stands for (grouped tests); 1 each

    def weight(self, start: int) -> int:
        """How many things the items from `start` on stand for."""
        return sum(self.weights[start:]) if self.weights is not None else len(self.items) - start


GUARANTEED_ITEMS = 3


def priority_order(sections: Sequence[Section], guaranteed: int = GUARANTEED_ITEMS) -> list[tuple[int, str]]:
    """(section index, item) in the order items are granted budget: the first `guaranteed` items of
    every section in section order, then the rest in section order. So 20 long compile errors
    cannot starve the failed tests or the warnings of any room; each section still keeps its own
    order, and the output is grouped by section whatever the order of granting."""
    first = [(i, item) for i, section in enumerate(sections) for item in section.items[:guaranteed]]
    rest = [(i, item) for i, section in enumerate(sections) for item in section.items[guaranteed:]]
    return first + rest


def fit(head: str, sections: Sequence[Section], budget: int,
        omitted_line: Callable[[int, str], str], tail: str = "") -> str:
    """head + as many items as fit + one omission line per section that lost items + tail."""
    flat = priority_order(sections)
    item_sizes = [size(item) for _, item in flat]
    title_sizes = [size(section.title) for section in sections]
    base = size(head) + size(tail)

    def total_size(taken: int) -> int:
        used = base + sum(item_sizes[:taken])
        included = [0] * len(sections)
        for s_index, _ in flat[:taken]:
            included[s_index] += 1
        for s_index, section in enumerate(sections):
            if included[s_index]:
                used += title_sizes[s_index]
            missing = section.weight(included[s_index])
            if missing:
                used += size(omitted_line(missing, section.noun))
        return used

    if total_size(0) > budget:  # not even one omission line per section fits: one line for all
        counts = ", ".join(f"{s.weight(0)} more {s.noun}" for s in sections if s.items)
        combined = omitted_line(0, "").replace("0 more ", counts, 1) if counts else ""
        return cut_to_bytes(combined + head + tail, budget)
    taken = _largest_fitting(len(flat), budget, total_size)
    out = [head]
    included_counts = [0] * len(sections)
    for s_index, _ in flat[:taken]:
        included_counts[s_index] += 1
    for s_index, section in enumerate(sections):
        chosen = included_counts[s_index]
        if chosen:
            out.append(section.title)
            out.extend(section.items[:chosen])
        missing = section.weight(chosen)
        if missing:
            out.append(omitted_line(missing, section.noun))
    out.append(tail)
    return cut_to_bytes("".join(out), budget)


def _largest_fitting(n: int, budget: int, total_size: Callable[[int], int]) -> int:
    """Largest prefix length whose rendering fits. Sizes grow with the prefix except for the
    omission lines' digits, so scan upward and stop at the first that does not fit. Running
    sums keep the scan linear: try by doubling, then bisect between the last two probes.
    """
    if n == 0 or total_size(1) > budget:
        return 0
    low, high = 1, 2
    while high <= n and total_size(high) <= budget:
        low, high = high, high * 2
    high = min(high, n + 1)
    while high - low > 1:
        mid = (low + high) // 2
        if total_size(mid) <= budget:
            low = mid
        else:
            high = mid
    return low
