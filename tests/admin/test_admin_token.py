"""issue-token against a fake of `POST /?securitytoken=true` (the STS operation lands on another branch):
the request is signed as the service checks it (`mnsd.access.authentication.authenticate`), and the answer is printed."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from admin.__main__ import main
from mnsd.access.authentication import authenticate
from mnsd.access.keys import StaticKeyStore
from mnsd.ground import errors
from mnsd.ground.http import HttpRequest
from mnsd.wire import codec, responses

KEY = ("1000000000000001", "TOKENKEY", "TOKENSECRET")
NARROWED = {"Version": "1", "Statement": [{"Effect": "Allow", "Action": ["mns:ReceiveMessage"], "Resource": ["*"]}]}
CREDENTIALS = codec.Node(
    "Credentials",
    [
        ("AccessKeyId", "STS.TEMPKEY"),
        ("AccessKeySecret", "TEMPSECRET"),
        ("SecurityToken", "sealed-token"),
        ("Expiration", "2026-11-24T20:00:00Z"),
    ],
)


class FakeTokenService(BaseHTTPRequestHandler):
    """Answers `POST /?securitytoken=true` signed by KEY with CREDENTIALS, and records what it was sent."""

    received: list[HttpRequest] = []

    def do_POST(self) -> None:
        path, _, query = self.path.partition("?")
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        request = HttpRequest("POST", path, query, {k.lower(): v for k, v in self.headers.items()}, body)
        self.received.append(request)
        try:
            authenticate(request, StaticKeyStore(":".join(KEY)), time.time(), region="cn-hangzhou")
            if (path, query) != ("/", "securitytoken=true"):
                raise errors.InvalidRequestURL()
            status, answer = 200, codec.encode(CREDENTIALS)
        except errors.MnsError as error:
            status, answer = error.status, codec.encode(responses.error_node(error, "REQUESTID", "http://fake"))
        self.send_response(status)
        self.send_header("Content-Type", "text/xml")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def token_service() -> Iterator[tuple[str, list[HttpRequest]]]:
    FakeTokenService.received = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeTokenService)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}", FakeTokenService.received
    server.shutdown()
    server.server_close()


def issue(endpoint: str, secret: str, *args: str) -> int:
    return main(
        ["issue-token", "--endpoint", endpoint, "--access-key-id", KEY[1], "--access-key-secret", secret, *args]
    )


def test_issue_token_sends_a_signed_request_with_duration_and_policy_and_prints_the_credentials(
    token_service, tmp_path: Path, capsys
) -> None:
    endpoint, received = token_service
    policy = tmp_path / "narrow.json"
    policy.write_text(json.dumps(NARROWED))
    assert issue(endpoint, KEY[2], "--duration", "900", "--policy", str(policy)) == 0
    assert capsys.readouterr().out.splitlines() == [
        "AccessKeyId=STS.TEMPKEY",
        "AccessKeySecret=TEMPSECRET",
        "SecurityToken=sealed-token",
        "Expiration=2026-11-24T20:00:00Z",
    ]
    (request,) = received
    body = codec.parse(request.body)
    assert body.tag == "SecurityToken" and body.value("DurationSeconds") == "900"
    assert json.loads(body.value("Policy") or "") == NARROWED


def test_without_options_the_token_request_names_neither_duration_nor_policy(token_service, capsys) -> None:
    endpoint, received = token_service
    assert issue(endpoint, KEY[2]) == 0
    assert [child.tag for child in codec.parse(received[0].body).children] == []


def test_a_refused_token_request_prints_the_mns_error(token_service, capsys) -> None:
    endpoint, received = token_service
    assert issue(endpoint, "not-the-secret") == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("error: SignatureDoesNotMatch: The request signature we calculated")
    assert captured.err.strip().endswith("(request id REQUESTID)")
    assert len(received) == 1


def test_a_bad_token_policy_is_refused_before_any_request(token_service, tmp_path: Path, capsys) -> None:
    endpoint, received = token_service
    policy = tmp_path / "bad.json"
    policy.write_text('{"Version": "1", "Statement": [{"Effect": "Allow"}]}')
    assert issue(endpoint, KEY[2], "--policy", str(policy)) == 1
    assert "Action must be a non-empty string or list of strings" in capsys.readouterr().err
    assert received == []


def test_an_unreachable_endpoint_is_said_so(capsys) -> None:
    assert issue("http://127.0.0.1:9", KEY[2]) == 1
    assert capsys.readouterr().err.startswith("error: NetworkError: cannot reach http://127.0.0.1:9")
