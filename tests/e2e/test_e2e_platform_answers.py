"""What the official SDK makes of the answers AWS gives when it throttles before our code runs (README,
"What a client gets when Lambda throttles"): API Gateway's JSON, not an MNS error."""

from __future__ import annotations

import pytest
from mns.account import Account
from mns.mns_exception import MNSClientNetworkException, MNSServerException

from tests.support.stub_http import QuietHandler, serving

ANSWERS = {
    "lambda throttled": (500, b'{"message":"Internal Server Error"}'),
    "api gateway throttled": (429, b'{"message":"Too Many Requests"}'),
}


@pytest.fixture
def platform():
    """A stand-in for API Gateway answering every request with one of its own (JSON) answers."""
    answer: list[tuple[int, bytes]] = []

    class Handler(QuietHandler):
        def _answer(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            self.rfile.read(length)
            status, body = answer[0]
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("apigw-requestid", "abc=")
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = do_PUT = do_DELETE = _answer

    with serving(Handler) as endpoint:
        yield endpoint, answer


@pytest.mark.parametrize("case", list(ANSWERS))
def test_the_sdk_gets_resp_data_damaged_not_an_mns_error(platform, case):
    endpoint, answer = platform
    answer.append(ANSWERS[case])
    queue = Account(endpoint, "KEY", "SECRET").get_queue("orders")
    with pytest.raises(MNSClientNetworkException) as raised:
        queue.receive_message(1)
    assert not isinstance(raised.value, MNSServerException)
    assert raised.value.type == "RespDataDamaged"
    assert ANSWERS[case][1].decode() in raised.value.message
