from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from ledger.export import format_money
from ledger.model import Entry


def per_account(entries: Iterable[Entry]) -> list[str]:
    totals: dict[str, int] = defaultdict(int)
    for entry in entries:
        totals[entry.account] += entry.amount_cents
    return [f"{account}: {format_money(cents)}" for account, cents in sorted(totals.items())]
