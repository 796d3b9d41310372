"""What a request's MNS signature covers decides what runs (`docs/security.md`): on the XML and JSON planes, a
signature of any characters is refused in the plane's own error shape, and a V4 query is read as it is signed."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from datetime import UTC, datetime
from email.utils import formatdate

import pytest

from local_runtime.dispatch import match_route
from mnsd.ground.http import HttpRequest
from mnsd.request import api
from tests.support.signers import V4Request, V4Signer
from tests.unit.access_calls import NS, REGION, ROOT, ROUTES, World

JSON_PLANE = {"x-mns-version": "2026-04-09"}
XML_PLANE = {"x-mns-version": "2015-06-06"}


def _send(world: World, method: str, path: str, query: str, headers: dict[str, str]) -> tuple[int, str, str]:
    """(status, error code, Content-Type) of a request through `api.handle`."""
    route_name, _, params = match_route(ROUTES, method, path)
    response = api.handle(route_name, HttpRequest(method, path, query, headers, b"", params), world.services)
    kind = response.headers.get("Content-Type", "")
    if response.status < 400:
        return response.status, "", kind
    if "json" in kind:
        return response.status, json.loads(response.body)["Code"], kind
    return response.status, ET.fromstring(response.body).findtext(f"{NS}Code") or "", kind


def _v4(world: World, query: str, plane: dict[str, str], sent_query: str | None = None) -> tuple[int, str, str]:
    """`GET /queues/q/messages?{query}` signed V4 as the Java SDK signs it; sent with `sent_query` when given."""
    now = world.clock.now()
    headers = {"host": "127.0.0.1:8080", "date": formatdate(now, usegmt=True), **plane}
    signed = V4Request("GET", f"/queues/q/messages?{query}", datetime.fromtimestamp(now, UTC), headers=dict(headers))
    headers["authorization"] = V4Signer().authorization(ROOT.key_id, ROOT.secret, signed, REGION)
    return _send(world, "GET", "/queues/q/messages", query if sent_query is None else sent_query, headers)


@pytest.mark.parametrize("plane", [XML_PLANE, JSON_PLANE], ids=["xml", "json"])
@pytest.mark.parametrize("signature", ["\u00e9t\u00e9", "\x00\xff", "\U0001f600", "\u00e9" * 500])
def test_a_signature_of_any_characters_is_refused_in_the_planes_error(plane, signature):
    world = World()
    date = formatdate(world.clock.now(), usegmt=True)
    v4 = f"MNS4-HMAC-SHA256 Credential={ROOT.key_id}/{date_day(world)}/{REGION}/mns/aliyun_v4_request,Signature="
    for authorization in (f"MNS {ROOT.key_id}:{signature}", v4 + signature):
        headers = {"host": "127.0.0.1:8080", "date": date, "authorization": authorization, **plane}
        status, code, kind = _send(world, "GET", "/queues/q/messages", "peekonly=true", headers)
        assert (status, code) == (403, "SignatureDoesNotMatch"), authorization
        assert ("json" in kind) is (plane is JSON_PLANE)


def date_day(world: World) -> str:
    return datetime.fromtimestamp(world.clock.now(), UTC).strftime("%Y%m%d")


@pytest.mark.parametrize(
    "sent",
    [
        "peekonly=false&peekonly=true",  # the name again, before the signed one: read first, signed last
        "peekonly=true&peekonly=false",
        "%20peekonly=true",  # a space around the name: trimmed when signed, kept when read
        "peekonly=%20true",
        "peekonly=tr+ue",
    ],
)
def test_a_v4_query_read_otherwise_than_signed_is_refused(sent):
    """Signed to peek (`?peekonly=true`), a query the routes would read as a receive is refused, and the message
    stays visible."""
    world = World()
    assert _v4(world, "peekonly=true", XML_PLANE, sent)[:2] == (403, "SignatureDoesNotMatch")
    assert _v4(world, "peekonly=true", XML_PLANE)[0] == 200  # still there to peek
    assert _v4(world, "peekonly=true", JSON_PLANE, sent)[:2] == (403, "SignatureDoesNotMatch")


def test_a_v4_query_as_the_sdks_send_it_is_served():
    world = World()
    assert _v4(world, "numOfMessages=2&peekonly=true", XML_PLANE)[0] == 200
    assert _v4(world, "peekonly=true&numOfMessages=2", JSON_PLANE)[0] == 200


@pytest.mark.parametrize("plane", [XML_PLANE, JSON_PLANE], ids=["xml", "json"])
@pytest.mark.parametrize("text", ["\u00e9", "\x00\xff" * 50, "\U0001f600"])
def test_every_other_signature_field_of_any_characters_is_a_4xx_in_the_planes_error(plane, text):
    """The key id, the token, the date and the V4 scope, not only the signature (these held before: kept so)."""
    world = World()
    date = formatdate(world.clock.now(), usegmt=True)
    scope = f"{date_day(world)}/{REGION}/mns/aliyun_v4_request"
    sent = [
        {"authorization": f"MNS {text}:abc", "date": date},
        {"authorization": f"MNS {ROOT.key_id}:abc", "date": date, "security-token": text},
        {"authorization": f"MNS {ROOT.key_id}:abc", "date": text},
        {"authorization": f"MNS4-HMAC-SHA256 Credential={text}/{scope},Signature=ab", "date": date},
        {
            "authorization": f"MNS4-HMAC-SHA256 Credential={ROOT.key_id}/{text}/{REGION}/mns/x,Signature=ab",
            "date": date,
        },
    ]
    for headers in sent:
        status, code, kind = _send(world, "GET", "/queues/q", "", {"host": "127.0.0.1:8080", **plane, **headers})
        assert 400 <= status < 500 and code, headers
        assert ("json" in kind) is (plane is JSON_PLANE)
