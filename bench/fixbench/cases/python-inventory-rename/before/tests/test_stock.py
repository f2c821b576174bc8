import pytest

from inventory.stock import OutOfStock, Warehouse


def test_receive_and_take():
    w = Warehouse("east")
    w.receive("X", 5)
    w.take("X", 2)
    assert w.get_stock("X") == 3


def test_take_too_much():
    w = Warehouse("east")
    w.receive("X", 1)
    with pytest.raises(OutOfStock, match="wanted 2, only 1"):
        w.take("X", 2)


def test_receive_rejects_zero():
    with pytest.raises(ValueError):
        Warehouse("east").receive("X", 0)
