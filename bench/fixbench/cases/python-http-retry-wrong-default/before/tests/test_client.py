from fetcher.client import Client
from fetcher.retry import TransientError


def test_default_policy_survives_two_transient_failures():
    answers = [TransientError("502"), TransientError("504"), b"payload"]
    slept = []

    def transport(url):
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    client = Client(transport, sleep=slept.append)
    assert client.get("https://example.org/feed") == b"payload"
    assert slept == [0.5, 1.0]
