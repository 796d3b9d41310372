"""Temporary credentials end to end: issued by the local server, used by the official SDK unchanged
(`Account(endpoint, id, secret, security_token=token)`), refused once expired or beyond their policy."""

from __future__ import annotations

import time
import uuid

import pytest
from mns.account import Account
from mns.mns_exception import MNSServerException
from mns.queue import Message, QueueMeta

from mnsd.access.keys import AccessKey
from mnsd.access.tokens import SecurityTokens, TokenRequest
from tests.support.raw_http import RawClient, assert_mns_error
from tests.support.servers import ACCOUNT_A, local_server
from tests.support.tokens import MESSAGES_ONLY, issue, policy_body

RECEIPT_SECRET = "e2e-security-token-receipt-secret"  # the server's: lets the test seal an already expired token


@pytest.fixture(scope="module")
def token_endpoint(tmp_path_factory, engine):
    with local_server(tmp_path_factory, engine, "tokens", MNS_RECEIPT_SECRET=RECEIPT_SECRET) as url:
        yield url


@pytest.fixture
def queue_name(token_endpoint):
    name = "sts-" + uuid.uuid4().hex[:16]
    queue = Account(token_endpoint, ACCOUNT_A[1], ACCOUNT_A[2]).get_queue(name)
    queue.create(QueueMeta())
    yield name
    queue.delete()


def sdk(endpoint: str, credentials: dict[str, str]) -> Account:
    return Account(
        endpoint,
        credentials["AccessKeyId"],
        credentials["AccessKeySecret"],
        security_token=credentials["SecurityToken"],
    )


def test_the_sdk_sends_and_receives_with_temporary_credentials(token_endpoint, queue_name):
    credentials = issue(token_endpoint, policy_body(MESSAGES_ONLY))
    assert credentials["AccessKeyId"].startswith("STS.")
    queue = sdk(token_endpoint, credentials).get_queue(queue_name)
    queue.set_encoding(False)
    queue.send_message(Message("sent with a security token"))
    received = queue.receive_message(wait_seconds=1)
    assert received.message_body == "sent with a security token"
    queue.delete_message(received.receipt_handle)


def test_an_action_the_tokens_policy_does_not_allow_is_refused(token_endpoint, queue_name):
    queue = sdk(token_endpoint, issue(token_endpoint, policy_body(MESSAGES_ONLY))).get_queue(queue_name)
    with pytest.raises(MNSServerException) as refused:
        queue.get_attributes()
    assert refused.value.type == "AccessDenied"
    assert "mns:GetQueueAttributes" in refused.value.message


def test_an_expired_token_is_refused(token_endpoint, queue_name):
    parent = AccessKey(*ACCOUNT_A)
    expired = SecurityTokens(RECEIPT_SECRET).issue(parent, time.time() - 901, TokenRequest(900))
    credentials = {
        "AccessKeyId": expired.access_key_id,
        "AccessKeySecret": expired.access_key_secret,
        "SecurityToken": expired.security_token,
    }
    with pytest.raises(MNSServerException) as refused:
        sdk(token_endpoint, credentials).get_queue(queue_name).send_message(Message("late"))
    assert refused.value.type == "SecurityTokenExpired"


def test_a_tampered_token_and_a_temporary_key_without_its_token_are_refused(token_endpoint, queue_name):
    credentials = issue(token_endpoint)
    tampered = {**credentials, "SecurityToken": "x" + credentials["SecurityToken"][1:]}
    with pytest.raises(MNSServerException) as refused:
        sdk(token_endpoint, tampered).get_queue(queue_name).send_message(Message("forged"))
    assert refused.value.type == "InvalidSecurityToken"
    without = {**credentials, "SecurityToken": ""}  # the SDK then sends no security-token header
    with pytest.raises(MNSServerException) as refused:
        sdk(token_endpoint, without).get_queue(queue_name).send_message(Message("no token"))
    assert refused.value.type == "InvalidAccessKeyId"


def test_bad_issue_requests_get_mns_errors(token_endpoint):
    raw = RawClient(token_endpoint, ACCOUNT_A[1], ACCOUNT_A[2])
    assert_mns_error(
        raw.request("POST", "/?securitytoken=true", policy_body(MESSAGES_ONLY, 60)), 400, "InvalidArgument"
    )
    assert_mns_error(raw.request("POST", "/"), 400, "InvalidRequestURL")
    credentials = issue(token_endpoint)
    temporary = RawClient(token_endpoint, credentials["AccessKeyId"], credentials["AccessKeySecret"])
    again = temporary.request("POST", "/?securitytoken=true", headers={"security-token": credentials["SecurityToken"]})
    assert_mns_error(again, 403, "AccessDenied")
