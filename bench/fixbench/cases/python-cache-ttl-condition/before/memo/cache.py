from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

V = TypeVar("V")


class Clock(Protocol):
    def now(self) -> float: ...


@dataclass
class _Entry(Generic[V]):
    value: V
    stored_at: float
    ttl: float | None


class TTLCache(Generic[V]):
    """A dict-like cache whose entries expire `ttl` seconds after they were stored."""

    def __init__(self, clock: Clock, default_ttl: float | None = 60.0) -> None:
        self._clock = clock
        self._default_ttl = default_ttl
        self._entries: dict[str, _Entry[V]] = {}

    def set(self, key: str, value: V, ttl: float | None = None) -> None:
        self._entries[key] = _Entry(value, self._clock.now(), ttl if ttl is not None else self._default_ttl)

    def _expired(self, entry: _Entry[V]) -> bool:
        return entry.ttl is not None and self._clock.now() - entry.stored_at >= entry.ttl

    def get(self, key: str, default: V | None = None) -> V | None:
        entry = self._entries.get(key)
        if entry is None or self._expired(entry):
            self._entries.pop(key, None)
            return default
        return entry.value

    def __len__(self) -> int:
        return sum(1 for entry in self._entries.values() if not self._expired(entry))
