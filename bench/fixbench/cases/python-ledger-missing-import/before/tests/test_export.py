from datetime import date

from ledger.export import balance_line, to_csv
from ledger.model import Entry

ENTRIES = [
    Entry(date(2025, 3, 1), "rent", "March rent", -95000),
    Entry(date(2025, 3, 2), "salary", "ACME, \"March\"", 412550),
]


def test_csv_quotes_and_formats():
    assert to_csv(ENTRIES).splitlines() == [
        "date,account,memo,amount",
        "2025-03-01,rent,March rent,-950.00 EUR",
        "2025-03-02,salary,\"ACME, \"\"March\"\"\",\"4,125.50 EUR\"",
    ]


def test_balance_line():
    assert balance_line(ENTRIES) == "Balance: 3,175.50 EUR"
