import pytest

from jobrunner.durations import parse_duration


@pytest.mark.parametrize(("text", "seconds"), [("90s", 90), ("15m", 900), ("2h", 7200), ("1d", 86400)])
def test_units(text, seconds):
    assert parse_duration(text) == seconds


def test_rejects_garbage():
    with pytest.raises(ValueError):
        parse_duration("soon")
