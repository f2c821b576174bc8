import pytest

from fetcher.retry import RetryPolicy, TransientError, call_with_retry


def flaky(failures: int):
    calls = []

    def fn():
        calls.append(1)
        if len(calls) <= failures:
            raise TransientError("503")
        return "ok"

    return fn, calls


def test_delays_grow():
    assert RetryPolicy(attempts=4, backoff_s=1).delays() == [1, 2, 4]


def test_gives_up_after_the_last_attempt():
    fn, calls = flaky(5)
    with pytest.raises(TransientError):
        call_with_retry(fn, RetryPolicy(attempts=2), sleep=lambda s: None)
    assert len(calls) == 2
