from jobrunner.settings import from_mapping


def test_defaults():
    s = from_mapping({"name": "backup"})
    assert (s.timeout_s, s.retry_delay_s) == (600, 30)


def test_explicit():
    s = from_mapping({"name": "backup", "timeout": "1h", "retry_delay": "2m"})
    assert (s.timeout_s, s.retry_delay_s) == (3600, 120)
