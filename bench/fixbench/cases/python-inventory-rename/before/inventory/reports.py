from __future__ import annotations

from inventory.stock import Warehouse

LOW_STOCK_THRESHOLD = 5


def low_stock(warehouse: Warehouse, threshold: int = LOW_STOCK_THRESHOLD) -> list[str]:
    """SKUs at or below the threshold, lowest first."""
    levels = {sku: warehouse.get_stock(sku) for sku in warehouse.skus()}
    low = [sku for sku, level in levels.items() if level <= threshold]
    return sorted(low, key=lambda sku: (levels[sku], sku))


def summary(warehouse: Warehouse) -> str:
    lines = [f"Warehouse {warehouse.name}"]
    for sku in warehouse.skus():
        lines.append(f"  {sku:<10} {warehouse.get_stock(sku):>5}")
    return "\n".join(lines)
