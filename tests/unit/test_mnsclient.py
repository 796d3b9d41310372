"""The tools' client (`mnsclient/`) against a stub endpoint that checks each request with the layer's own
authentication: its V2 signature verifies (with a security token too), its errors say whose fault they are and
whether to try again, and a message's body and properties go out and come back as they were."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from mnsclient.errors import CLIENT, SERVER, ServiceError
from mnsclient.messages import Message, MessageClient, Property
from mnsclient.resources import ResourceClient
from mnsclient.signing import Key
from mnsd.access.authentication import authenticate
from mnsd.access.keys import StaticKeyStore
from mnsd.ground import errors
from mnsd.ground.http import HttpRequest
from mnsd.wire import codec
from tests.support.stub_http import QuietHandler, serving

ACCOUNT, KEY_ID, SECRET = "1000000000000001", "client-key", "client-secret"
KEYS = StaticKeyStore(f"{ACCOUNT}:{KEY_ID}:{SECRET}")
ERROR = (
    '<?xml version="1.0" encoding="UTF-8"?><Error><Code>{}</Code><Message>m</Message><RequestId>r1</RequestId></Error>'
)


class Stub(QuietHandler):
    """Authenticates each request as the service does; answers what `answers` holds for its method and path."""

    answers: dict[tuple[str, str], tuple[int, str]] = {}
    seen: list[HttpRequest] = []

    def _serve(self) -> None:
        body = self.rfile.read(int(self.headers.get("content-length") or 0))
        path, _, query = self.path.partition("?")
        request = HttpRequest(self.command, path, query, {k.lower(): v for k, v in self.headers.items()}, body)
        Stub.seen.append(request)
        try:
            authenticate(request, KEYS, time.time(), region="cn-hangzhou")
            status, text = Stub.answers[(self.command, path)]
        except errors.MnsError as error:
            status, text = error.status, ERROR.format(error.code)
        data = text.encode()
        self.send_response(status)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_PUT = do_POST = do_DELETE = _serve


@pytest.fixture
def endpoint() -> Iterator[str]:
    Stub.answers, Stub.seen = {}, []
    with serving(Stub) as url:
        yield url


def test_a_request_is_signed_as_the_service_checks_it(endpoint):
    Stub.answers[("GET", "/queues/a%20b")] = (200, "<Queue><Policy>p</Policy></Queue>")
    assert ResourceClient(endpoint, Key(KEY_ID, SECRET)).policy("queues", "a b") == "p"
    assert Stub.seen[-1].raw_uri == "/queues/a%20b"


def test_a_wrong_secret_is_the_clients_fault_and_not_retried(endpoint):
    with pytest.raises(ServiceError) as refused:
        ResourceClient(endpoint, Key(KEY_ID, "not-the-secret")).policy("queues", "q")
    assert (refused.value.code, refused.value.status, refused.value.request_id) == ("SignatureDoesNotMatch", 403, "r1")
    assert refused.value.fault == CLIENT and not refused.value.retryable


def test_a_security_token_is_sent_beside_the_signature(endpoint):
    with pytest.raises(ServiceError) as refused:
        ResourceClient(endpoint, Key(KEY_ID, SECRET, "a-token")).policy("queues", "q")
    assert Stub.seen[-1].header("security-token") == "a-token"
    assert refused.value.code == "InvalidSecurityToken"  # read as temporary credentials: the stub issues none


def test_a_busy_or_silent_endpoint_is_the_servers_fault_and_retried(endpoint):
    Stub.answers[("GET", "/queues/q")] = (503, ERROR.format("ServiceUnavailable"))
    with pytest.raises(ServiceError) as busy:
        MessageClient(endpoint, Key(KEY_ID, SECRET)).counts("q")
    assert busy.value.fault == SERVER and busy.value.retryable
    with pytest.raises(ServiceError) as silent:
        MessageClient("http://127.0.0.1:1", Key(KEY_ID, SECRET)).counts("q")
    assert (silent.value.code, silent.value.status, silent.value.fault) == ("NetworkError", 0, SERVER)
    assert silent.value.retryable and SECRET not in str(silent.value)


def test_a_message_goes_out_and_comes_back_as_it_was(endpoint):
    sent = Message("id", "handle", "a\r\nb <&> ü", 3, "", 1, (Property("k", "v\r", "STRING"),))
    client = MessageClient(endpoint, Key(KEY_ID, SECRET))
    Stub.answers[("POST", "/queues/q/messages")] = (201, "")
    assert client.send("q", [sent]) == [None]
    request = codec.parse(Stub.seen[-1].body)
    entry = request.all("Message")[0]
    assert entry.value("MessageBody") == sent.body  # the \r kept (as &#13;): an XML reader turns a bare one into \n
    assert entry.child("UserProperties").all("PropertyValue")[0].value("Value") == "v\r"  # type: ignore[union-attr]
    Stub.answers[("GET", "/queues/q/messages")] = (
        200,
        "<Messages><Message><MessageId>id</MessageId><ReceiptHandle>handle</ReceiptHandle><MessageBody>a&#13;\nb "
        "&lt;&amp;&gt; ü</MessageBody><Priority>3</Priority><DequeueCount>1</DequeueCount><UserProperties>"
        "<PropertyValue><Name>k</Name><Value>v&#13;</Value><Type>STRING</Type></PropertyValue></UserProperties>"
        "</Message></Messages>",
    )
    assert client.receive("q", 16) == [sent]
    assert Stub.seen[-1].raw_uri == "/queues/q/messages?numOfMessages=16&waitseconds=1"


def test_a_batch_sends_each_refusal_apart(endpoint):
    Stub.answers[("POST", "/queues/q/messages")] = (
        500,
        "<Messages><Message><MessageId>1</MessageId><MessageBodyMD5>x</MessageBodyMD5></Message>"
        "<Message><ErrorCode>InvalidArgument</ErrorCode><ErrorMessage>too big</ErrorMessage></Message></Messages>",
    )
    outcomes = MessageClient(endpoint, Key(KEY_ID, SECRET)).send("q", [Message("1", "h", "x"), Message("2", "h", "y")])
    assert outcomes[0] is None
    assert outcomes[1] is not None and (outcomes[1].code, outcomes[1].message) == ("InvalidArgument", "too big")
