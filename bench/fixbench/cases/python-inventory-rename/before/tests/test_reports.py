from inventory.reports import low_stock, summary
from inventory.stock import Warehouse


def make() -> Warehouse:
    w = Warehouse("south")
    w.receive("A-1", 3)
    w.receive("B-2", 50)
    w.receive("C-3", 5)
    return w


def test_low_stock_lists_lowest_first():
    assert low_stock(make()) == ["A-1", "C-3"]


def test_low_stock_threshold():
    assert low_stock(make(), threshold=2) == []


def test_summary():
    assert summary(make()).splitlines() == [
        "Warehouse south",
        "  A-1            3",
        "  B-2           50",
        "  C-3            5",
    ]
