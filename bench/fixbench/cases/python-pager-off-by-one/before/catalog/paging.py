from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class Page(Generic[T]):
    number: int  # 1-based
    items: Sequence[T]
    total_pages: int

    @property
    def has_next(self) -> bool:
        return self.number < self.total_pages


def page_count(total: int, per_page: int) -> int:
    if per_page <= 0:
        raise ValueError("per_page must be positive")
    return max(1, math.ceil(total / per_page))


def paginate(items: Sequence[T], number: int, per_page: int = 20) -> Page[T]:
    pages = page_count(len(items), per_page)
    if not 1 <= number <= pages:
        raise IndexError(f"page {number} of {pages}")
    start = (number - 1) * per_page
    return Page(number, items[start:start + per_page], pages)
