import base64
import hashlib
from email.utils import formatdate

import pytest

from mnsd import errors
from mnsd.access import authentication as auth
from mnsd.access.keys import StaticKeyStore
from mnsd.http import HttpRequest

KEYS = StaticKeyStore("acct1:KEYID:SECRET")
NOW = 1_700_000_000.0


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
    assert auth.authenticate(_request(), KEYS, NOW).account_id == "acct1"


def test_missing_authorization():
    with pytest.raises(errors.MissingAuthorizationHeader):
        auth.authenticate(_request(drop=("authorization",)), KEYS, NOW)


@pytest.mark.parametrize("value", ["Bearer KEYID:sig", "MNS KEYID", "MNS :sig", "MNS KEYID:", "MNS"])
def test_invalid_authorization(value):
    request = _request()
    request.headers["authorization"] = value
    with pytest.raises(errors.InvalidAuthorizationHeader):
        auth.authenticate(request, KEYS, NOW)


def test_unknown_key():
    with pytest.raises(errors.InvalidAccessKeyId) as raised:
        auth.authenticate(_request(key_id="NOPE"), KEYS, NOW)
    assert raised.value.status == 403
    assert raised.value.message == "The access Id you provided does not exist."  # the live service's text


def test_missing_date():
    with pytest.raises(errors.MissingDateHeader):
        auth.authenticate(_request(drop=("date",)), KEYS, NOW)


def test_invalid_date():
    with pytest.raises(errors.InvalidDateHeader):
        auth.authenticate(_request(date="yesterday-ish"), KEYS, NOW)


def test_wrong_secret():
    with pytest.raises(errors.SignatureDoesNotMatch):
        auth.authenticate(_request(secret="WRONG"), KEYS, NOW)


def test_tampered_header():
    request = _request()
    request.headers["x-mns-version"] = "2099"
    with pytest.raises(errors.SignatureDoesNotMatch):
        auth.authenticate(request, KEYS, NOW)


@pytest.mark.parametrize("offset", [-15 * 60 - 2, 15 * 60 + 2])
def test_time_expired_both_directions(offset):
    request = _request(date=formatdate(NOW + offset, usegmt=True))
    with pytest.raises(errors.TimeExpired):
        auth.authenticate(request, KEYS, NOW)


@pytest.mark.parametrize("offset", [-15 * 60 + 2, 15 * 60 - 2])
def test_within_window(offset):
    auth.authenticate(_request(date=formatdate(NOW + offset, usegmt=True)), KEYS, NOW)


def test_x_mns_date_replaces_date():
    mns_date = formatdate(NOW, usegmt=True)
    request = _request(headers={"x-mns-date": mns_date}, date=formatdate(NOW - 3600, usegmt=True), sign_date=mns_date)
    assert auth.authenticate(request, KEYS, NOW).key_id == "KEYID"
    # Without Date at all, x-mns-date still suffices.
    request = _request(headers={"x-mns-date": mns_date}, sign_date=mns_date, drop=("date",))
    auth.authenticate(request, KEYS, NOW)


def test_content_md5_hex_base64_accepted():
    body = b"<Message><MessageBody>hi</MessageBody></Message>"
    md5 = base64.b64encode(hashlib.md5(body).hexdigest().encode()).decode()
    auth.authenticate(_request(headers={"content-md5": md5}, body=body), KEYS, NOW)
    raw = base64.b64encode(hashlib.md5(body).digest()).decode()
    auth.authenticate(_request(headers={"content-md5": raw}, body=body), KEYS, NOW)


def test_content_md5_mismatch():
    md5 = base64.b64encode(hashlib.md5(b"other").hexdigest().encode()).decode()
    with pytest.raises(errors.InvalidDigest):
        auth.authenticate(_request(headers={"content-md5": md5}, body=b"body"), KEYS, NOW)
