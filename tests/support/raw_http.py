"""Signed raw HTTP for end-to-end tests: requests the SDKs would not send, and the MNS error they get."""

from __future__ import annotations

import base64
import hashlib
import http.client
import socket
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from email.utils import formatdate, parsedate_to_datetime

from tests.support.signers import V4Request, V4Signer, v2_signature
from tests.support.strict_xml import parse_error

NS = "{http://mns.aliyuncs.com/doc/v1}"


@dataclass
class RawResponse:
    status: int
    headers: dict[str, str]
    body: bytes
    raw_headers: list[tuple[str, str]] = field(default_factory=list)

    def xml(self) -> ET.Element:
        return ET.fromstring(self.body)

    def error_code(self) -> str | None:
        root = self.xml()
        el = root.find(NS + "Code")
        return None if el is None else el.text


def content_md5(body: bytes) -> str:
    return base64.b64encode(hashlib.md5(body).hexdigest().encode()).decode()


class RawClient:
    """Requests signed V2, or V4 (MNS4-HMAC-SHA256, as the Java SDK 2.0 signs) for `region` when one is given."""

    def __init__(self, endpoint: str, key_id: str, secret: str, region: str | None = None) -> None:
        hostport = endpoint.split("://", 1)[1]
        self.host, port = hostport.split(":")
        self.port = int(port)
        self.key_id = key_id
        self.secret = secret
        self.region = region

    def request(
        self,
        method: str,
        resource: str,
        body: bytes | str = b"",
        *,
        headers: dict | None = None,
        sign_request: bool = True,
        date: str | None = None,
        md5: str | None = None,
        host: str | None = None,
        content_type: str = "text/xml;charset=UTF-8",
    ) -> RawResponse:
        if isinstance(body, str):
            body = body.encode()
        hdrs = {"x-mns-version": "2015-06-06"}
        hdrs.update(headers or {})
        date = date or formatdate(usegmt=True)
        md5 = content_md5(body) if md5 is None and body else (md5 or "")
        all_headers = {"Date": date, "Content-Type": content_type, "Content-Length": str(len(body)), **hdrs}
        if md5:
            all_headers["Content-MD5"] = md5
        if sign_request and self.region:
            signed = V4Request(method, resource, parsedate_to_datetime(date), headers=dict(all_headers))
            all_headers["Authorization"] = V4Signer().authorization(self.key_id, self.secret, signed, self.region)
        elif sign_request:
            sig = v2_signature(self.secret, method, md5, content_type, date, hdrs, resource)
            all_headers["Authorization"] = f"MNS {self.key_id}:{sig}"
        conn = http.client.HTTPConnection(self.host, self.port, timeout=40)
        try:
            conn.putrequest(method, resource, skip_host=True, skip_accept_encoding=True)
            conn.putheader("Host", host or f"{self.host}:{self.port}")
            for k, v in all_headers.items():
                conn.putheader(k, v)
            conn.endheaders(body)
            resp = conn.getresponse()
            data = resp.read()
            raw = resp.getheaders()
            return RawResponse(resp.status, {k.lower(): v for k, v in raw}, data, raw)
        finally:
            conn.close()


def assert_mns_error(resp: RawResponse, status: int, code: str) -> None:
    """The response is a well-formed MNS error with the given status and code."""
    assert resp.status < 500, resp.body
    assert resp.status == status, (resp.status, resp.body)
    assert "x-mns-request-id" in [k for k, _ in resp.raw_headers], resp.raw_headers
    error = parse_error(resp.body)  # as strictly as the Java SDK's JAXB binding reads it
    assert error.code == code, resp.body
    assert error.request_id == resp.headers["x-mns-request-id"]


def address(endpoint: str) -> tuple[str, int]:
    host, port = endpoint.split("://", 1)[1].split(":")
    return host, int(port)


def exchange(endpoint: str, data: bytes, timeout: float = 10.0) -> RawResponse:
    """Send raw bytes, read one HTTP answer (whatever the request line and headers look like)."""
    with socket.create_connection(address(endpoint), timeout=timeout) as sock:
        sock.sendall(data)
        answer = http.client.HTTPResponse(sock, method=data.split(b" ", 1)[0].decode("latin-1"))
        answer.begin()
        body = answer.read()
        raw = answer.getheaders()
        return RawResponse(answer.status, {k.lower(): v for k, v in raw}, body, raw)


def request(method: str, target: str, headers: dict[str, str], body: bytes = b"") -> bytes:
    head = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    return f"{method} {target} HTTP/1.1\r\nHost: 127.0.0.1\r\n{head}\r\n".encode("latin-1") + body
