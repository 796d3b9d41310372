"""Mail and SMS refusals that no retry mends end the delivery at once (permanent); throttling does not."""

from __future__ import annotations

import boto3
import pytest
from botocore.exceptions import ClientError
from moto import mock_aws

from mnsd.ground.settings import Settings
from mnsd.model.topics import Subscription, SubscriptionAttributes, TopicMessage
from mnsd.push.delivery import Deliverer

REGION = "cn-hangzhou"


def subscription(endpoint: str) -> Subscription:
    return Subscription("1000000000000001", "t", "s", SubscriptionAttributes(endpoint), 0, 0, "topic-id")


def message(**attributes: dict) -> TopicMessage:
    return TopicMessage("1000000000000001", "t", "topic-id", "message-id", "hello", "", 0, **attributes)


MAIL = {"AccountName": "sender@example.com", "Subject": "Hi", "AddressType": 0, "IsHtml": 0}
SMS = {"FreeSignName": "MNS", "TemplateCode": "T", "Type": "singleContent", "SmsParams": "{}"}


class Refusing:
    """An SES/SNS client whose every call is answered with the AWS error `code`."""

    def __init__(self, code: str) -> None:
        self.code = code

    def _refuse(self, **kwargs: object) -> None:
        raise ClientError({"Error": {"Code": self.code, "Message": "refused"}}, "Call")

    send_email = publish = _refuse


def deliverer(client: object) -> Deliverer:
    return Deliverer(Settings(region=REGION), None, lambda name: client)


@pytest.fixture
def ses(monkeypatch):
    for name, value in (("AWS_ACCESS_KEY_ID", "testing"), ("AWS_SECRET_ACCESS_KEY", "testing")):
        monkeypatch.setenv(name, value)
    with mock_aws():
        yield boto3.client("ses", region_name="us-east-1")


def test_an_unverified_sender_is_a_permanent_failure(ses) -> None:
    outcome = deliverer(ses).deliver(subscription("mail:directmail:someone@example.com"), message(direct_mail=MAIL))
    assert not outcome.delivered and outcome.permanent
    assert outcome.detail.startswith("MessageRejected")


def test_a_verified_sender_delivers(ses) -> None:
    ses.verify_email_identity(EmailAddress="sender@example.com")
    outcome = deliverer(ses).deliver(subscription("mail:directmail:someone@example.com"), message(direct_mail=MAIL))
    assert outcome.delivered


@pytest.mark.parametrize(
    ("code", "permanent"),
    [
        ("MessageRejected", True),
        ("AccessDenied", True),
        ("AccessDeniedException", True),
        ("Throttling", False),
        ("ServiceUnavailable", False),
    ],
)
def test_mail_refusals_by_code(code: str, permanent: bool) -> None:
    outcome = deliverer(Refusing(code)).deliver(
        subscription("mail:directmail:someone@example.com"), message(direct_mail=MAIL)
    )
    assert not outcome.delivered and outcome.permanent is permanent


@pytest.mark.parametrize(
    ("code", "permanent"),
    [
        ("AuthorizationError", True),
        ("InvalidParameter", True),
        ("InvalidParameterValue", True),
        ("Throttled", False),
        ("InternalError", False),
    ],
)
def test_sms_refusals_by_code(code: str, permanent: bool) -> None:
    outcome = deliverer(Refusing(code)).deliver(subscription("sms:directsms:13800000000"), message(direct_sms=SMS))
    assert not outcome.delivered and outcome.permanent is permanent


def test_a_failure_that_is_no_aws_answer_stays_transient() -> None:
    class Broken:
        def publish(self, **kwargs: object) -> None:
            raise ConnectionResetError("reset")

    outcome = deliverer(Broken()).deliver(subscription("sms:directsms:13800000000"), message(direct_sms=SMS))
    assert not outcome.delivered and not outcome.permanent
