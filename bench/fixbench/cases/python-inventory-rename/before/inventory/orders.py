from __future__ import annotations

from dataclasses import dataclass

from inventory.stock import OutOfStock, Warehouse


@dataclass(frozen=True)
class OrderLine:
    sku: str
    quantity: int


def can_fulfil(warehouse: Warehouse, lines: list[OrderLine]) -> bool:
    return all(warehouse.get_stock(line.sku) >= line.quantity for line in lines)


def fulfil(warehouse: Warehouse, lines: list[OrderLine]) -> list[str]:
    """Take every line or nothing; returns the SKUs taken."""
    if not can_fulfil(warehouse, lines):
        missing = next(line for line in lines if warehouse.get_stock(line.sku) < line.quantity)
        raise OutOfStock(missing.sku, missing.quantity, warehouse.get_stock(missing.sku))
    for line in lines:
        warehouse.take(line.sku, line.quantity)
    return [line.sku for line in lines]
