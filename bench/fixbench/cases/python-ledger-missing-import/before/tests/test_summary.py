from datetime import date

from ledger.model import Entry
from ledger.summary import per_account


def test_per_account_sorted_by_name():
    entries = [Entry(date(2025, 1, 1), "b", "", 5), Entry(date(2025, 1, 2), "a", "", -1005)]
    assert per_account(entries) == ["a: -10.05 EUR", "b: 0.05 EUR"]
