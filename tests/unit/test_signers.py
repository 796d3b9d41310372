"""V4 signatures (MNS4-HMAC-SHA256): the test signer and the server's verifier, each held to the known answers of
the Java SDK 2.0.0's `MNSV4SignerTest` (`src/test/java/com/aliyun/mns/unitTest/client/common/`)."""

from __future__ import annotations

import base64
from datetime import UTC, datetime

import pytest

from mnsd.access import signature_v4
from mnsd.ground.http import HttpRequest
from tests.support.signers import V4Request, V4Signer, java_url_encode


def _time(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(UTC)


# (signing key, base64; content to sign; hex signature): testV4BuildSignature and its edge cases.
BUILD_SIGNATURE = [
    (
        "biPl5icbr+5R2EFnPBDy0XkgiSRZqIQlBNi3PNhsfpg=",
        "GET\n\ntext/xml;charset=UTF-8\nWed, 04 Jun 2025 06:33:37 GMT\nx-mns-ret-number:1\nx-mns-version:2015-06-06\n"
        "x-mns-with-meta:false\n/queues",
        "da2ee97bef2e4e7a0a3c6e98b501963b2502b67218ea712de4e8d3c7e047a83f",
    ),
    (
        "biPl5icbr+5R2EFnPBDy0XkgiSRZqIQlBNi3PNhsfpg=",
        "PUT\n\ntext/xml;charset=UTF-8\nTue, 03 Jun 2025 11:23:48 GMT\nx-mns-version:2015-06-06\n/queues/TestQueue",
        "b5e06cd0cba5fbab4fff9e33bb654dbae64bdb90421d965dcf3c46889fd8ad60",
    ),
    (
        "2HhAzNXcwZJs3dhqkYg7yqkUjS3so+UdhbUR+eKEgtQ=",
        "MNS4-HMAC-SHA256\n20251124T091359Z\n20251124/eu-west-1/mns/aliyun_v4_request\nPUT\n"
        "/queues/queue-auto-25112417-l0PHHVTHYv\n\ncontent-type:text/xml;charset=UTF-8\nx-mns-version:2015-06-06\n\n",
        "63ebcf43397e672c47d48ca5d9ef7245e59626da7a3d58d37c75cde993429e98",
    ),
    (
        "testKeyBase64=",
        "GET\n\n\nWed, 04 Jun 2025 06:33:37 GMT\n/queues",
        "0f05d1c75194465126ded4c71030eba629164b2a4ec919eebedc515506aac70c",
    ),
    (
        "anotherTestKeyBase64=",
        "POST\n\napplication/json\nWed, 04 Jun 2025 06:33:37 GMT\nx-mns-version:2015-06-06\n/queues/Test Queue@123",
        "7b54f1ca5a071b9ad9b6c2aec36a75b3813a76887c76d9eae980d909230506ec",
    ),
]

QUERY_PARAMS = {"param1": "abc", "PARAM2": "d  ef", "PARAM3": "[def]#bbb", "PARAM4": "中文参数"}
CASE2_HEADERS = {"x-mns-abc": "kkk", "X-MNS-Sss": "2015-06-06xFFF", "x-kkk-def": "jjj", "X-KKK-def": "lll"}
CASE3_HEADERS = {
    "x-mns-version": "2015-06-30",
    "x-mns-ttt": "1",
    "X-MNS-UUUuu": "FALse",
    "bb-MNS-UUUuu": "abcdddDDD",
    "Content-Type": "application/json",
    "Content-MD5": "0d9d2ce750000593eb34f00",
}
# The SDK's second and third cases, signed by both signers (the second's path, as the SDK's public cloud case
# writes it, without its leading slash there).
CASE2_KEYS = ("akkkkk1111111111", "skkkkkkk1111111111", "region2")
CASE2_TIME = _time("2025-12-03T11:23:48Z")
CASE3 = (
    ("akkkkk222222222", "skkkkkk2222222222", "eu-west-1"),
    V4Request("GET", "/queues", _time("2025-12-04T06:32:35.638Z"), headers=CASE3_HEADERS),
)

# (signer, key id, secret, region, request, Authorization): testSignV4PublicCloud, testSignV4IdptCloud,
# testSignV4EdgeCases and testSignV4WithResourcePathContainsParam.
AUTHORIZATIONS = [
    (
        V4Signer(),
        ("ak1", "sk1", "region1"),
        V4Request("POST", "/queues/TestQueue/", _time("2025-06-03T10:52:35.638Z"), dict(QUERY_PARAMS)),
        "MNS4-HMAC-SHA256 Credential=ak1/20250603/region1/mns/aliyun_v4_request,"
        "Signature=1fc6013f158d4c3aba09570895a2a93c8445c2c5213d82a1463baf602cf0d945",
    ),
    (
        V4Signer(),
        CASE2_KEYS,
        V4Request("PUT", "queues/TestQueue123456", CASE2_TIME, headers=CASE2_HEADERS),
        "MNS4-HMAC-SHA256 Credential=akkkkk1111111111/20251203/region2/mns/aliyun_v4_request,"
        "Signature=04f1e5f929b5aaac3af6a54970f591581ecd2aade2562f926c5f2ec5d5c8cfad",
    ),
    (
        V4Signer(),
        *CASE3,
        "MNS4-HMAC-SHA256 Credential=akkkkk222222222/20251204/eu-west-1/mns/aliyun_v4_request,"
        "Signature=294f776a2d5726df679b54b081ab8126a199a2545c8c8a7a875adff0b386e458",
    ),
    (
        V4Signer.apsara(),
        ("ak1", "sk1", "region1"),
        V4Request("POST", "/queues/TestQueue", _time("2025-06-03T10:52:35.638Z"), dict(QUERY_PARAMS)),
        "APSARA-MNS4-HMAC-SHA256 Credential=ak1/20250603/region1/mns/apsara_v4_request,"
        "Signature=51269315dedfd0f0252cbca05356c85f5005077796a1e8463c54d6716f331389",
    ),
    (
        V4Signer.apsara(),
        CASE2_KEYS,
        V4Request("PUT", "/queues/TestQueue123456", CASE2_TIME, headers=CASE2_HEADERS),
        "APSARA-MNS4-HMAC-SHA256 Credential=akkkkk1111111111/20251203/region2/mns/apsara_v4_request,"
        "Signature=5bddaa9d4931254d477cc601836e6c2477bb793c499ac3d17a9493cf98786c51",
    ),
    (
        V4Signer.apsara(),
        *CASE3,
        "APSARA-MNS4-HMAC-SHA256 Credential=akkkkk222222222/20251204/eu-west-1/mns/apsara_v4_request,"
        "Signature=b0f49b3575379975f04f728ba9f6771dfd451c226d16924d42938953396c9e8f",
    ),
    (
        V4Signer(),
        ("testAk", "testSk", "testRegion"),
        V4Request("GET", "/", _time("2025-06-03T10:52:35.638Z")),
        "MNS4-HMAC-SHA256 Credential=testAk/20250603/testRegion/mns/aliyun_v4_request,"
        "Signature=63f78964dcd1132bab91b9c38ceebdfb59509149b34874c5b2c9dfc2b12e7291",
    ),
    (
        V4Signer(),
        ("testAk", "testSk", "testRegion"),
        V4Request("POST", "/queues/Test Queue@123", _time("2025-06-03T10:52:35.638Z")),
        "MNS4-HMAC-SHA256 Credential=testAk/20250603/testRegion/mns/aliyun_v4_request,"
        "Signature=87de7499365a31e767cdc0c726a893c72c860e415876f7f92914197ac3795833",
    ),
    (
        V4Signer(),
        ("ak1", "sk1", "region1"),
        V4Request("POST", "/queues/TestQueue?num=10&paramx=100", _time("2025-06-03T10:52:35.638Z"), dict(QUERY_PARAMS)),
        "MNS4-HMAC-SHA256 Credential=ak1/20250603/region1/mns/aliyun_v4_request,"
        "Signature=8d555514e749185d3e6d68df416692e6cc960ba85a089c9d69a2f4d7bb607560",
    ),
]


def commons_base64_decode(text: str) -> bytes:
    """Apache Commons Codec's lenient `Base64.decodeBase64`, which the SDK's test uses: a lone trailing
    character (`testKeyBase64=`) is dropped, not an error."""
    text = text.rstrip("=")
    if len(text) % 4 == 1:
        text = text[:-1]
    return base64.b64decode(text + "=" * (-len(text) % 4))


@pytest.mark.parametrize(("key", "content", "expected"), BUILD_SIGNATURE)
def test_signer_builds_the_sdks_signatures(key, content, expected):
    assert V4Signer.build_signature(commons_base64_decode(key), content) == expected


@pytest.mark.parametrize(("signer", "keys", "request_", "expected"), AUTHORIZATIONS)
def test_signer_gives_the_sdks_authorization(signer, keys, request_, expected):
    key_id, secret, region = keys
    assert signer.authorization(key_id, secret, request_, region) == expected


def _as_sent(request: V4Request) -> HttpRequest:
    """The request as it reaches the server: the path and query as the Java SDK writes them on the wire
    (`ServiceClient`: parameters `name=urlEncode(value)` after the resource path's own), names lower-cased."""
    path, _, query = request.resource_path.partition("?")
    pairs = [query] if query else []
    pairs += [f"{name}={java_url_encode(value, False)}" for name, value in request.parameters.items()]
    path = java_url_encode(path if path.startswith("/") else "/" + path, True)
    return HttpRequest(request.method, path, "&".join(pairs), {k.lower(): v for k, v in request.headers.items()})


@pytest.mark.parametrize(("signer", "keys", "request_", "expected"), AUTHORIZATIONS)
def test_server_verifies_the_sdks_authorization(signer, keys, request_, expected):
    _key_id, secret, region = keys
    credential = signature_v4.parse(expected)
    assert credential is not None and credential.region == region
    sent = _as_sent(request_)
    credential.check_scope(region, request_.time)
    assert credential.matches(secret, sent, request_.time)
    assert not credential.matches(secret + "x", sent, request_.time)


def test_server_refuses_a_scope_of_another_region_product_or_date():
    time = _time("2025-06-03T10:52:35Z")
    for header, refused in (
        ("MNS4-HMAC-SHA256 Credential=ak/20250603/eu-west-1/mns/aliyun_v4_request,Signature=ab", "region"),
        ("MNS4-HMAC-SHA256 Credential=ak/20250603/cn-hangzhou/oss/aliyun_v4_request,Signature=ab", "service"),
        ("MNS4-HMAC-SHA256 Credential=ak/20250602/cn-hangzhou/mns/aliyun_v4_request,Signature=ab", "date"),
        ("MNS4-HMAC-SHA256 Credential=ak/20250603/cn-hangzhou/mns/apsara_v4_request,Signature=ab", "service"),
    ):
        credential = signature_v4.parse(header)
        assert credential is not None
        with pytest.raises(Exception) as refusal:
            credential.check_scope("cn-hangzhou", time)
        assert getattr(refusal.value, "code", None) == "SignatureDoesNotMatch"
        assert refused in str(refusal.value)


@pytest.mark.parametrize(
    "header",
    [
        "MNS4-HMAC-SHA256 Credential=ak/20250603/cn-hangzhou/mns,Signature=ab",
        "MNS4-HMAC-SHA256 Credential=ak/20250603/cn-hangzhou/mns/aliyun_v4_request",
        "MNS4-HMAC-SHA256 Signature=ab",
        "MNS4-HMAC-SHA256 Credential=/20250603/cn-hangzhou/mns/aliyun_v4_request,Signature=ab",
    ],
)
def test_server_refuses_a_malformed_v4_header(header):
    with pytest.raises(Exception) as refusal:
        signature_v4.parse(header)
    assert getattr(refusal.value, "code", None) == "InvalidAuthorizationHeader"


def test_other_schemes_are_not_v4():
    assert signature_v4.parse("MNS KEY:c2lnbmF0dXJl") is None
    assert signature_v4.parse("AWS4-HMAC-SHA256 Credential=x") is None
