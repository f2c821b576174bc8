from __future__ import annotations

from dataclasses import dataclass, field


class OutOfStock(Exception):
    def __init__(self, sku: str, wanted: int, available: int) -> None:
        super().__init__(f"{sku}: wanted {wanted}, only {available} available")
        self.sku = sku
        self.wanted = wanted
        self.available = available


@dataclass
class Warehouse:
    name: str
    _levels: dict[str, int] = field(default_factory=dict)

    def receive(self, sku: str, quantity: int) -> None:
        if quantity <= 0:
            raise ValueError("quantity must be positive")
        self._levels[sku] = self._levels.get(sku, 0) + quantity

    def get_stock(self, sku: str) -> int:
        return self._levels.get(sku, 0)

    def take(self, sku: str, quantity: int) -> None:
        available = self.get_stock(sku)
        if quantity > available:
            raise OutOfStock(sku, quantity, available)
        self._levels[sku] = available - quantity

    def skus(self) -> list[str]:
        return sorted(self._levels)
