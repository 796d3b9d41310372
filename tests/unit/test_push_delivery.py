import base64
import json
import xml.etree.ElementTree as ET

from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding

from mnsd import xmlcodec
from mnsd.delivery import content_md5, http_push, notification_body, sms_text
from mnsd.push_signing import generate_signing_material, sign, string_to_sign
from mnsd.settings import Settings
from mnsd.topic_model import Subscription, SubscriptionAttributes, TopicMessage

KEY, CERT = generate_signing_material()
MESSAGE = TopicMessage("1000000000000001", "t", "tid", "MSGID", "a & <b>", "tag", 1449556920975)


def subscription(endpoint: str = "http://h.example/", content_format: str = "XML") -> Subscription:
    attributes = SubscriptionAttributes(endpoint, notify_content_format=content_format)
    return Subscription("1000000000000001", "t", "s", attributes, 0, 0, "tid")


def test_string_to_sign_matches_the_spec_example():
    headers = {
        "Content-MD5": "ZDgxNjY5ZjFMDQ5MGM0YWMwMWE5ODImZDVIYmQxYjI=",
        "Content-Type": "text/xml;charset=utf-8",
        "Date": "Wed, 25 May 2016 10:46:14 GMT",
        "x-mns-version": "2015-06-06",
        "x-mns-request-id": "57458276F0E3D56D7C00054B",
        "x-mns-signing-cert-url": "aHR0cDovL21uc3Rlc3Qub3Nz",
        "Authorization": "ignored",
    }
    assert string_to_sign("POST", headers, "/notifications") == (
        "POST\nZDgxNjY5ZjFMDQ5MGM0YWMwMWE5ODImZDVIYmQxYjI=\ntext/xml;charset=utf-8\nWed, 25 May 2016 10:46:14 GMT\n"
        "x-mns-request-id:57458276F0E3D56D7C00054B\nx-mns-signing-cert-url:aHR0cDovL21uc3Rlc3Qub3Nz\n"
        "x-mns-version:2015-06-06\n/notifications"
    )


def test_signatures_verify_with_the_certificate_public_key():
    public_key = x509.load_pem_x509_certificate(CERT.encode()).public_key()
    signature = base64.b64decode(sign(KEY, "text to sign"))
    public_key.verify(signature, b"text to sign", padding.PKCS1v15(), hashes.SHA1())  # raises if invalid


def test_an_http_push_carries_the_spec_headers():
    settings = Settings(signing_key=KEY, signing_cert_url="http://cert.example/c.pem")
    url, headers, body = http_push(subscription("http://h.example"), MESSAGE, settings)
    assert url == "http://h.example/notifications"
    assert headers["Content-MD5"] == content_md5(body)
    assert base64.b64decode(headers["x-mns-signing-cert-url"]) == b"http://cert.example/c.pem"
    expected = string_to_sign("POST", headers, "/notifications")
    public_key = x509.load_pem_x509_certificate(CERT.encode()).public_key()
    public_key.verify(base64.b64decode(headers["Authorization"]), expected.encode(), padding.PKCS1v15(), hashes.SHA1())


def test_notification_formats():
    root = ET.fromstring(notification_body(subscription(content_format="XML"), MESSAGE))
    ns = "{http://mns.aliyuncs.com/doc/v1/}"
    assert [child.tag[len(ns) :] for child in root] == [
        "TopicOwner", "TopicName", "Subscriber", "SubscriptionName", "MessageId", "Message", "MessageMD5",
        "MessageTag", "PublishTime",
    ]  # fmt: skip
    assert root.find(ns + "Message").text == "a & <b>"
    as_json = json.loads(notification_body(subscription(content_format="JSON"), MESSAGE))
    assert as_json["PublishTime"] == "1449556920975" and as_json["MessageTag"] == "tag"
    assert notification_body(subscription(content_format="SIMPLIFIED"), MESSAGE) == "a & <b>"


def test_untagged_messages_carry_no_message_tag():
    untagged = TopicMessage("1", "t", "tid", "M", "b", "", 1)
    assert "MessageTag" not in notification_body(subscription(), untagged)
    assert xmlcodec.parse(notification_body(subscription(), untagged).encode()).value("MessageTag") is None


def test_sms_text_fills_parameters_after_the_signature():
    assert sms_text("code ${code}, ${n} left", {"code": "1234", "n": 2}, "Shop") == "【Shop】code 1234, 2 left"
    assert sms_text("plain", {}, "") == "plain"
