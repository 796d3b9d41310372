"""The classic MNS API (XML, signed V2): one signed request and its answer, read with the service's own XML codec
(`mnsd.wire.codec`); a refusal raises `ServiceError` with the MNS code, message and request id."""

from __future__ import annotations

from email.utils import formatdate

from mnsclient.errors import ServiceError
from mnsclient.signing import Key, v2_headers
from mnsclient.transport import TIMEOUT_SECONDS, Reply, Transport
from mnsd.ground.errors import MalformedXML
from mnsd.wire import codec

VERSION = "2015-06-06"
XML_TYPE = "text/xml;charset=UTF-8"


def refusal(reply: Reply) -> ServiceError:
    """The refusal an answer carries (`<Error>`), or one naming its HTTP status when it carries none."""
    try:
        root: codec.Element | None = codec.parse(reply.body)
    except MalformedXML:
        root = None
    if root is None or root.tag != "Error":
        text = reply.body[:200].decode("utf-8", "replace")
        return ServiceError(reply.status, f"HTTP{reply.status}", text, reply.headers.get("x-mns-request-id", ""))
    return ServiceError(
        reply.status, root.value("Code") or "", root.value("Message") or "", root.value("RequestId") or ""
    )


def parsed(reply: Reply) -> codec.Element | None:
    """An answer's XML, None when it has no body; a refusal is raised."""
    if reply.status >= 300:
        raise refusal(reply)
    if not reply.body.strip():
        return None
    try:
        return codec.parse(reply.body)
    except MalformedXML:
        raise ServiceError(reply.status, "InvalidResponse", reply.body[:200].decode("utf-8", "replace")) from None


class XmlClient:
    """Signed requests to one endpoint's XML API with one key (each thread on its own kept-alive connection)."""

    def __init__(self, endpoint: str, key: Key, timeout: float = TIMEOUT_SECONDS) -> None:
        self.key = key
        self.transport = Transport(endpoint.rstrip("/"), timeout)

    @property
    def endpoint(self) -> str:
        return self.transport.endpoint

    def exchange(self, method: str, resource: str, body: bytes = b"", mns: dict[str, str] | None = None) -> Reply:
        """One signed request for `resource` (its path and query, encoded as sent), with the `x-mns-*` headers
        `mns`; the answer as it came, refusals included."""
        date = formatdate(usegmt=True)
        headers = v2_headers(
            self.key, method, resource, date, XML_TYPE, body, {"x-mns-version": VERSION, **(mns or {})}
        )
        headers["Host"] = self.transport.netloc
        return self.transport.request(method, resource, body, headers)

    def call(self, method: str, resource: str, body: codec.Node | None = None) -> codec.Element | None:
        """One signed request with `body` encoded; the answer's XML (None when it has no body)."""
        return parsed(self.exchange(method, resource, codec.encode(body) if body is not None else b""))
