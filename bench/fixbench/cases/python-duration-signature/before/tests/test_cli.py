from jobrunner.cli import parse_args


def test_default_timeout():
    assert parse_args(["nightly"]) == ("nightly", 600)


def test_timeout_in_hours():
    assert parse_args(["nightly", "--timeout", "2h"]) == ("nightly", 7200)
