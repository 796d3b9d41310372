"""The wakes the service posts to the wait tier (`mnsd.waiting.wakes`): now with a count, later with a time,
and a post that fails changes nothing for the operation that made the message receivable."""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from mnsd.queues.notifier import PollingNotifier, wake
from mnsd.waiting.wakes import KeptAlivePost, TierWakes, aws_signer
from tests.support.clocks import ManualClock


class Posts:
    def __init__(self, fail: bool = False) -> None:
        self.sent: list[dict] = []
        self.fail = fail

    def __call__(self, body: bytes) -> None:
        if self.fail:
            raise ConnectionRefusedError("the tier is restarting")
        self.sent.append(json.loads(body))


def test_messages_receivable_now_and_later_are_posted_as_a_count_and_the_earliest_time() -> None:
    posts = Posts()
    wakes = TierWakes(PollingNotifier(ManualClock()), posts)
    wake(wakes, "q/1", [1000, 1000, 5000, 3000], now_ms=1000)
    assert posts.sent == [{"channel": "mns.q_1", "count": 2}, {"channel": "mns.q_1", "at": 3000}]


def test_a_wake_that_cannot_be_posted_is_logged_not_raised(caplog: pytest.LogCaptureFixture) -> None:
    wakes = TierWakes(PollingNotifier(ManualClock()), Posts(fail=True))
    wakes.notify("q", 3)
    wakes.due("q", 5000)
    assert "wait tier wake not delivered" in caplog.text


class Tier(ThreadingHTTPServer):
    """A wake endpoint that counts the connections it accepts and the wakes posted to it; `close_after` answers
    with `Connection: close` after that many wakes on a connection."""

    def __init__(self, close_after: int = 0, status: int = 204) -> None:
        self.connections, self.wakes, self.headers_seen = 0, [], []
        tier = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def setup(self) -> None:
                super().setup()
                tier.connections += 1
                self.served = 0

            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 (the standard library's name)
                tier.wakes.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
                tier.headers_seen.append(dict(self.headers))
                self.served += 1
                self.send_response(status)
                self.send_header("Content-Length", "0")
                if close_after and self.served >= close_after:
                    self.send_header("Connection", "close")
                    self.close_connection = True
                self.end_headers()

        super().__init__(("127.0.0.1", 0), Handler)
        self.daemon_threads = True
        threading.Thread(target=self.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/wake"


def test_wakes_are_posted_over_one_kept_alive_connection_per_thread() -> None:
    tier = Tier()
    try:
        post = KeptAlivePost(tier.url)
        for n in range(5):
            post(json.dumps({"channel": "mns.q", "count": n}).encode())
        worker = threading.Thread(target=post, args=(b'{"channel": "mns.q", "count": 9}',))
        worker.start()
        worker.join()
        assert [w["count"] for w in tier.wakes] == [0, 1, 2, 3, 4, 9]
        assert tier.connections == 2  # (one for this thread's five wakes, one for the other thread's)
    finally:
        tier.shutdown()


def test_a_connection_the_tier_closed_is_replaced_and_the_wake_still_posted() -> None:
    tier = Tier(close_after=2)
    try:
        post = KeptAlivePost(tier.url)
        for n in range(5):
            post(json.dumps({"channel": "mns.q", "count": n}).encode())
        assert [w["count"] for w in tier.wakes] == [0, 1, 2, 3, 4]
        assert tier.connections == 3
    finally:
        tier.shutdown()


def test_a_refused_wake_and_an_unreachable_tier_are_errors_the_notifier_logs(caplog: pytest.LogCaptureFixture) -> None:
    tier = Tier(status=403)
    try:
        with pytest.raises(OSError, match="403"):
            KeptAlivePost(tier.url)(b'{"channel": "mns.q", "count": 1}')
    finally:
        tier.shutdown()
        tier.server_close()
    wakes = TierWakes(PollingNotifier(ManualClock()), KeptAlivePost(tier.url))
    wakes.notify("q", 1)  # (nobody listens there now)
    assert "wait tier wake not delivered" in caplog.text


def test_a_signed_wake_carries_the_signers_headers() -> None:
    tier = Tier()
    signed: list[tuple[str, bytes]] = []

    def sign(url: str, body: bytes, headers: dict[str, str]) -> dict[str, str]:
        signed.append((url, body))
        return {"Authorization": f"signed {headers['Host']}"}

    try:
        KeptAlivePost(tier.url, sign)(b'{"channel": "mns.q", "count": 1}')
        assert signed == [(tier.url, b'{"channel": "mns.q", "count": 1}')]
        assert tier.headers_seen[0]["Authorization"] == f"signed 127.0.0.1:{tier.server_address[1]}"
    finally:
        tier.shutdown()


def test_the_aws_signer_signs_the_wake_for_the_apis_iam_route(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret")
    monkeypatch.setenv("AWS_REGION", "eu-west-1")
    monkeypatch.delenv("AWS_SESSION_TOKEN", raising=False)
    url = "https://abc.execute-api.eu-west-1.amazonaws.com/wait-tier/wake"
    headers = aws_signer()(url, b"{}", {"Host": "abc.execute-api.eu-west-1.amazonaws.com"})
    assert headers["Authorization"].startswith("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/")
    assert "/eu-west-1/execute-api/aws4_request" in headers["Authorization"]
    assert "X-Amz-Date" in headers
