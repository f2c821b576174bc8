import pytest

from inventory.orders import OrderLine, can_fulfil, fulfil
from inventory.stock import OutOfStock, Warehouse


@pytest.fixture
def warehouse() -> Warehouse:
    w = Warehouse("north")
    w.receive("BOLT-M4", 100)
    w.receive("NUT-M4", 40)
    return w


def test_fulfil_takes_every_line(warehouse):
    assert fulfil(warehouse, [OrderLine("BOLT-M4", 10), OrderLine("NUT-M4", 10)]) == ["BOLT-M4", "NUT-M4"]
    assert warehouse.get_stock("BOLT-M4") == 90


def test_fulfil_takes_nothing_when_a_line_is_short(warehouse):
    with pytest.raises(OutOfStock) as info:
        fulfil(warehouse, [OrderLine("BOLT-M4", 10), OrderLine("NUT-M4", 50)])
    assert info.value.available == 40
    assert warehouse.get_stock("BOLT-M4") == 100


def test_can_fulfil_unknown_sku(warehouse):
    assert not can_fulfil(warehouse, [OrderLine("WASHER", 1)])
