"""Every error code the service can answer, in the body it answers with, read by the clients that read it: as
strictly as the Java SDK's JAXB binding (`tests/support/strict_xml.py`), by the Python SDK's decoder and by the Node SDK."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from mns.mns_xml_handler import ErrorDecoder

from mnsd.ground import errors
from mnsd.request import door
from tests.support.strict_xml import NotAnErrorMessage, parse_error
from tests.support.stub_http import QuietHandler, serving

NODE_READER = Path(__file__).parent.parent / "node" / "read_errors.js"


def every_error() -> list[type[errors.MnsError]]:
    """The error classes of the MNS API, one per code (the OpenAPI's own, answered in its JSON only, are
    `tests/e2e/test_e2e_mns_open.py`'s)."""
    found: dict[str, type[errors.MnsError]] = {}
    pending: list[type[errors.MnsError]] = [errors.MnsError]
    while pending:
        kind = pending.pop()
        if issubclass(kind, errors.OpenApiError):
            continue
        found.setdefault(kind.code, kind)
        pending.extend(kind.__subclasses__())
    return [found[code] for code in sorted(found)]


ERRORS = every_error()


def body_of(kind: type[errors.MnsError]) -> tuple[int, bytes, dict[str, str]]:
    response = door.error_response(kind(), "5F2A6B3C4D5E6F708192A3B4", "http://1000000000000001.mns.localhost")
    return response.status, response.body, response.headers


def test_the_codes_are_the_services():
    codes = {kind.code for kind in ERRORS}
    assert {"QueueNotExist", "MessageNotExist", "SignatureDoesNotMatch", "TopicNotExist"} <= codes
    assert len(codes) >= 40


@pytest.mark.parametrize("kind", ERRORS, ids=lambda kind: kind.code)
def test_every_error_reads_as_the_java_sdk_binds_it(kind):
    status, body, headers = body_of(kind)
    error = parse_error(body)
    assert (error.code, error.request_id) == (kind.code, "5F2A6B3C4D5E6F708192A3B4")
    assert error.message == kind.default_message and error.host_id.startswith("http://")
    assert headers["Content-Type"].startswith("text/xml") and 400 <= status < 600


@pytest.mark.parametrize("kind", ERRORS, ids=lambda kind: kind.code)
def test_every_error_reads_in_the_python_sdk(kind):
    _status, body, _headers = body_of(kind)
    code, message, request_id, host_id, _ = ErrorDecoder.decodeError(body.decode("utf-8"))
    assert (code, message, request_id) == (kind.code, kind.default_message, "5F2A6B3C4D5E6F708192A3B4")


def test_the_strict_reading_refuses_what_the_java_sdk_refuses():
    """A trailing slash on the namespace, no namespace, or a prefixed one: no ErrorMessage for JAXB."""
    _status, body, _headers = body_of(errors.QueueNotExist)
    for wrong in (
        body.replace(b"doc/v1", b"doc/v1/"),
        body.replace(b' xmlns="http://mns.aliyuncs.com/doc/v1"', b""),
        body.replace(b"<Code>", b'<Code xmlns="urn:other">'),
    ):
        with pytest.raises(NotAnErrorMessage):
            parse_error(wrong)


def test_every_error_reads_in_the_node_sdk():
    """The Node SDK names an error `MNS{Code}Error` from the body's `Code`: a stub answers each code's body to a
    GetQueueAttributes of the queue named after it."""
    bodies = {kind.code: body_of(kind) for kind in ERRORS}

    class Stub(QuietHandler):
        def do_GET(self) -> None:
            status, body, headers = bodies[self.path.rsplit("/", 1)[-1]]
            self.send_response(status)
            for name, value in {**headers, "Content-Length": str(len(body)), "x-mns-request-id": "R"}.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)

    with serving(Stub) as endpoint:
        result = subprocess.run(
            ["node", str(NODE_READER), endpoint, *bodies], capture_output=True, text=True, timeout=60, check=True
        )
    names = dict(line.split("\t") for line in result.stdout.splitlines())
    assert names == {code: f"MNS{code}Error" for code in bodies}


@pytest.mark.parametrize(
    ("accept", "json_body"),
    [(None, False), ("*/*", False), ("application/json", True), ("text/xml, application/json", False)],
)
def test_an_error_is_json_only_to_a_client_that_asks_for_json_and_not_xml(accept, json_body):
    response = door.error_response(errors.QueueNotExist(), "RID", "http://h", accept)
    if json_body:
        assert response.headers["Content-Type"].startswith("application/json")
        assert json.loads(response.body) == {
            "Code": "QueueNotExist",
            "Message": errors.QueueNotExist.default_message,
            "RequestId": "RID",
            "HostId": "http://h",
        }
    else:
        assert parse_error(response.body).code == "QueueNotExist"
