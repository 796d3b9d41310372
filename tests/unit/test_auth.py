import base64
import hashlib
from datetime import UTC, datetime
from email.utils import formatdate

import pytest

from mnsd.access import authentication as auth
from mnsd.access.keys import StaticKeyStore
from mnsd.ground import errors
from mnsd.ground.http import HttpRequest
from tests.support.signers import V4Request, V4Signer

KEYS = StaticKeyStore("acct1:KEYID:SECRET")
NOW = 1_700_000_000.0
REGION = "cn-hangzhou"


def test_known_answer():
    text = "PUT\n574683b3684e3cff610afa155cc2506d\ntext/xml\nTue, 11 Apr 2017 10:09:19 GMT\nx-mns-version:2015-06-06\n/"
    assert auth.sign("ACCESS_KEY_SECRET", text) == "A9zehggaYHHujmuRMxGIDrhWwx8="


def test_string_to_sign_sorts_mns_headers_and_keeps_raw_uri():
    request = HttpRequest(
        "get",
        "/queues/q1/messages",
        "waitseconds=3&numOfMessages=2",
        {
            "x-mns-version": "2015-06-06",
            "x-mns-date": "d",
            "content-type": "text/xml",
            "host": "h",
            "x-other": "no",
        },
    )
    text = auth.string_to_sign(request, "DATE")
    assert text == (
        "GET\n\ntext/xml\nDATE\nx-mns-date:d\nx-mns-version:2015-06-06\n/queues/q1/messages?waitseconds=3&numOfMessages=2"
    )


def _request(headers=None, body=b"", date=None, secret="SECRET", key_id="KEYID", drop=(), sign_date=None):
    date = date or formatdate(NOW, usegmt=True)
    h = {"date": date, "content-type": "text/xml", "x-mns-version": "2015-06-06"}
    h.update(headers or {})
    unsigned = HttpRequest("PUT", "/queues/q", "", h, body)
    signature = auth.sign(secret, auth.string_to_sign(unsigned, sign_date or date))
    h["authorization"] = f"MNS {key_id}:{signature}"
    for name in drop:
        h.pop(name, None)
    return HttpRequest("PUT", "/queues/q", "", h, body)


def test_authenticate_ok():
    assert auth.authenticate(_request(), KEYS, NOW, region=REGION).account_id == "acct1"


def test_missing_authorization():
    with pytest.raises(errors.MissingAuthorizationHeader):
        auth.authenticate(_request(drop=("authorization",)), KEYS, NOW, region=REGION)


@pytest.mark.parametrize("value", ["Bearer KEYID:sig", "MNS KEYID", "MNS :sig", "MNS KEYID:", "MNS"])
def test_invalid_authorization(value):
    request = _request()
    request.headers["authorization"] = value
    with pytest.raises(errors.InvalidAuthorizationHeader):
        auth.authenticate(request, KEYS, NOW, region=REGION)


@pytest.mark.parametrize("signed", [lambda **kw: _request(**kw), lambda **kw: _v4_request(**kw)], ids=["v2", "v4"])
def test_unknown_key(signed):
    with pytest.raises(errors.InvalidAccessKeyId) as raised:
        auth.authenticate(signed(key_id="NOPE"), KEYS, NOW, region=REGION)
    assert raised.value.status == 403
    assert raised.value.message == "The access Id you provided does not exist."  # the live service's text


def test_missing_date():
    with pytest.raises(errors.MissingDateHeader):
        auth.authenticate(_request(drop=("date",)), KEYS, NOW, region=REGION)


def test_invalid_date():
    with pytest.raises(errors.InvalidDateHeader):
        auth.authenticate(_request(date="yesterday-ish"), KEYS, NOW, region=REGION)


@pytest.mark.parametrize("signed", [lambda **kw: _request(**kw), lambda **kw: _v4_request(**kw)], ids=["v2", "v4"])
def test_wrong_secret(signed):
    with pytest.raises(errors.SignatureDoesNotMatch):
        auth.authenticate(signed(secret="WRONG"), KEYS, NOW, region=REGION)


def test_tampered_header():
    request = _request()
    request.headers["x-mns-version"] = "2099"
    with pytest.raises(errors.SignatureDoesNotMatch):
        auth.authenticate(request, KEYS, NOW, region=REGION)


@pytest.mark.parametrize("offset", [-15 * 60 - 2, 15 * 60 + 2])
def test_time_expired_both_directions(offset):
    request = _request(date=formatdate(NOW + offset, usegmt=True))
    with pytest.raises(errors.TimeExpired):
        auth.authenticate(request, KEYS, NOW, region=REGION)


@pytest.mark.parametrize("offset", [-15 * 60 + 2, 15 * 60 - 2])
def test_within_window(offset):
    auth.authenticate(_request(date=formatdate(NOW + offset, usegmt=True)), KEYS, NOW, region=REGION)


def test_x_mns_date_replaces_date():
    mns_date = formatdate(NOW, usegmt=True)
    request = _request(headers={"x-mns-date": mns_date}, date=formatdate(NOW - 3600, usegmt=True), sign_date=mns_date)
    assert auth.authenticate(request, KEYS, NOW, region=REGION).key_id == "KEYID"
    # Without Date at all, x-mns-date still suffices.
    request = _request(headers={"x-mns-date": mns_date}, sign_date=mns_date, drop=("date",))
    auth.authenticate(request, KEYS, NOW, region=REGION)


def test_content_md5_hex_base64_accepted():
    body = b"<Message><MessageBody>hi</MessageBody></Message>"
    md5 = base64.b64encode(hashlib.md5(body).hexdigest().encode()).decode()
    auth.authenticate(_request(headers={"content-md5": md5}, body=body), KEYS, NOW, region=REGION)
    raw = base64.b64encode(hashlib.md5(body).digest()).decode()
    auth.authenticate(_request(headers={"content-md5": raw}, body=body), KEYS, NOW, region=REGION)


def test_content_md5_mismatch():
    md5 = base64.b64encode(hashlib.md5(b"other").hexdigest().encode()).decode()
    with pytest.raises(errors.InvalidDigest):
        auth.authenticate(_request(headers={"content-md5": md5}, body=b"body"), KEYS, NOW, region=REGION)


# ---------------------------------------------------------------- V4 (MNS4-HMAC-SHA256), signed by `tests/support/signers.py`


def _v4_request(
    *, secret="SECRET", region=REGION, at=NOW, date_at=None, headers=None, body=b"", query="", key_id="KEYID"
):
    """A PUT signed V4 as the Java SDK signs it: `at` is the time it signs, `date_at` the Date header it sends."""
    sent_time = datetime.fromtimestamp(at, UTC)
    h = {
        "date": formatdate(NOW if date_at is None else date_at, usegmt=True),
        "content-type": "text/xml;charset=UTF-8",
        "x-mns-version": "2015-06-06",
        **(headers or {}),
    }
    path = "/queues/q" + (f"?{query}" if query else "")
    signed = V4Request("PUT", path, sent_time, headers=dict(h))
    h["authorization"] = V4Signer().authorization(key_id, secret, signed, region)
    return HttpRequest("PUT", "/queues/q", query, h, body)


def test_v4_authenticates():
    assert auth.authenticate(_v4_request(), KEYS, NOW, region=REGION).key_id == "KEYID"
    query = "waitseconds=3&numOfMessages=2&peekonly=true"
    assert auth.authenticate(_v4_request(query=query), KEYS, NOW, region=REGION).account_id == "acct1"


def test_v4_scope_of_another_region():
    with pytest.raises(errors.SignatureDoesNotMatch) as refused:
        auth.authenticate(_v4_request(region="eu-west-1"), KEYS, NOW, region=REGION)
    assert "region eu-west-1" in refused.value.message
    assert refused.value.status == 403


def test_v4_scope_of_another_date():
    """Signed a day before the Date header it sends: the scope's date is not the request's."""
    with pytest.raises(errors.SignatureDoesNotMatch) as refused:
        auth.authenticate(_v4_request(at=NOW - 86_400), KEYS, NOW, region=REGION)
    assert "date" in refused.value.message


@pytest.mark.parametrize("offset", [-15 * 60 - 2, 15 * 60 + 2])
def test_v4_stale_time(offset):
    request = _v4_request(at=NOW + offset, date_at=NOW + offset)
    with pytest.raises(errors.TimeExpired):
        auth.authenticate(request, KEYS, NOW, region=REGION)


@pytest.mark.parametrize(
    ("name", "value"),
    [("x-mns-version", "2099"), ("content-type", "application/json"), ("x-mns-priority", "1")],
)
def test_v4_tampered_signed_header(name, value):
    request = _v4_request()
    request.headers[name] = value
    with pytest.raises(errors.SignatureDoesNotMatch):
        auth.authenticate(request, KEYS, NOW, region=REGION)


def test_v4_tampered_query_or_path():
    request = _v4_request(query="waitseconds=3")
    tampered = HttpRequest(request.method, request.path, "waitseconds=30", request.headers)
    with pytest.raises(errors.SignatureDoesNotMatch):
        auth.authenticate(tampered, KEYS, NOW, region=REGION)
    moved = HttpRequest(request.method, "/queues/other", request.raw_query, request.headers)
    with pytest.raises(errors.SignatureDoesNotMatch):
        auth.authenticate(moved, KEYS, NOW, region=REGION)


def test_v4_unsigned_headers_may_change():
    """Only content-type, content-md5 and x-mns-* are signed: a proxy's own headers do not break a signature."""
    request = _v4_request()
    request.headers["user-agent"] = "proxy/1.0"
    request.headers["x-forwarded-for"] = "127.0.0.1"
    auth.authenticate(request, KEYS, NOW, region=REGION)


def test_v4_content_md5_checked_against_the_body():
    body = b"<Message><MessageBody>hi</MessageBody></Message>"
    md5 = base64.b64encode(hashlib.md5(body).digest()).decode()  # the Tea gateway's form
    auth.authenticate(_v4_request(headers={"content-md5": md5}, body=body), KEYS, NOW, region=REGION)
    with pytest.raises(errors.InvalidDigest):
        auth.authenticate(_v4_request(headers={"content-md5": md5}, body=b"other"), KEYS, NOW, region=REGION)
