"""End-to-end fixtures: a real `python -m local_runtime` server, SDK accounts and a signed raw-HTTP client."""

from __future__ import annotations

import base64
import hashlib
import http.client
import os
import uuid
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from email.utils import formatdate, parsedate_to_datetime

import pytest
from local_server import free_port, start_server, stop_server
from mns.account import Account
from mns.mns_exception import MNSServerException
from mns.queue import Queue, QueueMeta
from mns.topic import Topic, TopicMeta
from signers import V4Request, V4Signer, v2_signature
from strict_xml import parse_error

NS = "{http://mns.aliyuncs.com/doc/v1}"

ACCOUNT_A = ("1000000000000001", "KEYA", "SECRETA")
ACCOUNT_B = ("2000000000000002", "KEYB", "SECRETB")


def server_env(port: int, **extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        MNS_PORT=str(port),
        MNS_CREDENTIALS=",".join(":".join(a) for a in (ACCOUNT_A, ACCOUNT_B)),
        MNS_ACCOUNT_ID=ACCOUNT_A[0],
        MNS_ACCESS_KEY_ID=ACCOUNT_A[1],
        MNS_ACCESS_KEY_SECRET=ACCOUNT_A[2],
        MNS_PUSH_ALLOWED_NETWORKS="127.0.0.0/8,::1/128",  # the test push endpoints listen on 127.0.0.1
        **extra,
    )
    return env


# Every e2e test runs against each storage engine of the local runtime (MNS_E2E_ENGINES narrows it).
ENGINES = os.environ.get("MNS_E2E_ENGINES", "sqlite,moto").split(",")


@pytest.fixture(scope="session", params=ENGINES)
def engine(request) -> str:
    return request.param


@contextmanager
def local_server(tmp_path_factory, engine: str, name: str, **extra: str) -> Iterator[str]:
    """A server of its own on `engine` (its data and log in fresh folders named after `name`), for the block:
    its endpoint URL. `extra` is added to its environment."""
    port = free_port()
    data = str(tmp_path_factory.mktemp(f"{name}-data-{engine}"))
    env = server_env(port, MNS_ENGINE=engine, MNS_DATA_DIR=data, **extra)
    proc = start_server(env, port, tmp_path_factory.mktemp(f"{name}-server") / "server.log")
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        stop_server(proc)


@pytest.fixture(scope="session")
def endpoint(tmp_path_factory, engine):
    with local_server(
        tmp_path_factory, engine, "shared", MNS_EXPORT_DIR=str(tmp_path_factory.mktemp("exports"))
    ) as url:
        yield url


@pytest.fixture(scope="session")
def account_a(endpoint) -> Account:
    return Account(endpoint, ACCOUNT_A[1], ACCOUNT_A[2])


@pytest.fixture(scope="session")
def new_account_a(endpoint):
    """A factory of independent Account objects (the SDK client is not thread-safe)."""
    return lambda: Account(endpoint, ACCOUNT_A[1], ACCOUNT_A[2])


@pytest.fixture(scope="session")
def account_b(endpoint) -> Account:
    return Account(endpoint, ACCOUNT_B[1], ACCOUNT_B[2])


@pytest.fixture
def qname() -> str:
    return "e2e-" + uuid.uuid4().hex[:20]


@pytest.fixture
def tname() -> str:
    return "e2e-t-" + uuid.uuid4().hex[:20]


def text_queue(account: Account, name: str, meta: QueueMeta | None = None) -> Queue:
    """The queue `name` created with `meta` (default attributes without), its messages read as raw text."""
    q = account.get_queue(name)
    q.create(meta or QueueMeta())
    q.set_encoding(False)
    return q


def fresh_topic(account: Account, name: str) -> Iterator[Topic]:
    """The topic `name` (default attributes) for a fixture to yield, deleted after."""
    t = account.get_topic(name)
    t.create(TopicMeta())
    yield t
    t.delete()


@pytest.fixture
def topic(account_a, tname):
    """A freshly created topic (default attributes) of account A."""
    yield from fresh_topic(account_a, tname)


def list_pages(list_page, prefix: str, per_page: int, most: int = 10) -> list[list[str]]:
    """The names `list_page` (an SDK `list_queue` or `list_topic`) gives under `prefix`, page by page, following
    the markers to the last page (`most` pages at the most)."""
    pages: list[list[str]] = []
    marker = ""
    while True:
        urls, marker = list_page(prefix=prefix, ret_number=per_page, marker=marker)
        pages.append([url.rsplit("/", 1)[1] for url in urls])
        if not marker:
            return pages
        assert len(pages) < most


def assert_deleted_and_deletes_again(resource, missing: str) -> None:
    """`resource` (an SDK Queue or Topic) deletes; it is gone (`missing`), and deleting it again is no error."""
    resource.delete()
    with pytest.raises(MNSServerException) as exc:
        resource.get_attributes()
    assert exc.value.type == missing
    resource.delete()


@pytest.fixture
def queue(account_a, qname):
    """A freshly created queue (default attributes, short visibility timeout) of account A."""
    q = account_a.get_queue(qname)
    meta = QueueMeta()
    meta.set_visibilitytimeout(30)
    q.create(meta)
    yield q
    try:
        q.delete()
    except Exception:
        pass


# ---------------------------------------------------------------- raw signed HTTP


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


@pytest.fixture(scope="session")
def raw_a(endpoint) -> RawClient:
    return RawClient(endpoint, ACCOUNT_A[1], ACCOUNT_A[2])


def assert_mns_error(resp: RawResponse, status: int, code: str) -> None:
    """The response is a well-formed MNS error with the given status and code."""
    assert resp.status < 500, resp.body
    assert resp.status == status, (resp.status, resp.body)
    assert "x-mns-request-id" in [k for k, _ in resp.raw_headers], resp.raw_headers
    error = parse_error(resp.body)  # as strictly as the Java SDK's JAXB binding reads it
    assert error.code == code, resp.body
    assert error.request_id == resp.headers["x-mns-request-id"]


@pytest.fixture(scope="session")
def mns_error():
    return assert_mns_error
