"""A small warehouse inventory: stock levels, orders and reports."""

from inventory.stock import Warehouse

__all__ = ["Warehouse"]
