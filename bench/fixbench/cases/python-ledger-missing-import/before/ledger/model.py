from __future__ import annotations

from dataclasses import dataclass
from datetime import date


@dataclass(frozen=True)
class Entry:
    day: date
    account: str
    memo: str
    amount_cents: int  # positive = credit, negative = debit
