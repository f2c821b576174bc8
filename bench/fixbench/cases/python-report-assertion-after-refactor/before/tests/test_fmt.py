import pytest

from buildstats.fmt import format_elapsed, format_ratio


@pytest.mark.parametrize(("seconds", "text"), [(0, "0s"), (4.4, "4s"), (59.6, "60s"), (125, "125s")])
def test_format_elapsed(seconds, text):
    assert format_elapsed(seconds) == text


def test_format_ratio():
    assert format_ratio(1, 3) == "33%"
    assert format_ratio(0, 0) == "n/a"
