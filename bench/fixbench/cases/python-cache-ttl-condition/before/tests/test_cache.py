from memo import FakeClock, TTLCache


def test_entry_lives_until_its_ttl():
    clock = FakeClock()
    cache = TTLCache(clock, default_ttl=10)
    cache.set("a", 1)
    clock.advance(9.9)
    assert cache.get("a") == 1
    clock.advance(0.1)
    assert cache.get("a") is None


def test_per_entry_ttl_overrides_the_default():
    clock = FakeClock()
    cache = TTLCache(clock, default_ttl=10)
    cache.set("a", 1, ttl=100)
    clock.advance(50)
    assert cache.get("a") == 1


def test_no_default_ttl_means_entries_never_expire():
    clock = FakeClock()
    cache = TTLCache(clock, default_ttl=None)
    cache.set("a", 1)
    clock.advance(10**9)
    assert cache.get("a") == 1
    assert len(cache) == 1


def test_len_counts_live_entries():
    clock = FakeClock()
    cache = TTLCache(clock, default_ttl=5)
    cache.set("a", 1)
    clock.advance(3)
    cache.set("b", 2)
    clock.advance(3)
    assert len(cache) == 1
