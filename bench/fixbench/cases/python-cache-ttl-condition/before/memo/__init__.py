from memo.cache import TTLCache
from memo.clock import FakeClock, MonotonicClock

__all__ = ["FakeClock", "MonotonicClock", "TTLCache"]
