"""CSV and plain-text exports of ledger entries."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable

from ledger.model import Entry


def format_money(cents: int, currency: str = "EUR") -> str:
    sign = "-" if cents < 0 else ""
    whole, frac = divmod(abs(cents), 100)
    return f"{sign}{whole:,}.{frac:02d} {currency}"


def to_csv(entries: Iterable[Entry]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["date", "account", "memo", "amount"])
    for entry in entries:
        writer.writerow([entry.day.isoformat(), entry.account, entry.memo, format_money(entry.amount_cents)])
    return out.getvalue()


def balance_line(entries: Iterable[Entry]) -> str:
    total = sum(entry.amount_cents for entry in entries)
    return f"Balance: {format_money(total)}"
