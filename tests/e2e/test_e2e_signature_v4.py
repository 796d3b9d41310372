"""V4 signatures (MNS4-HMAC-SHA256) end to end, on each engine: every operation of the API reference signed as the
Java SDK 2.0 signs (`tests/support/signers.py`), the refusals of a bad signature or scope, temporary credentials and a
policy-limited key under V4."""

from __future__ import annotations

import json
import time
import uuid
from email.utils import formatdate, parsedate_to_datetime

import pytest

from mnsd.model.policy import grant_document
from tests.support.raw_http import NS, RawClient, assert_mns_error
from tests.support.servers import ACCOUNT_A, ACCOUNT_B, local_server
from tests.support.signers import V4Request, V4Signer
from tests.support.tokens import MESSAGES_ONLY

REGION = "cn-hangzhou"  # the local server's (MNS_REGION's default)
XMLNS_BODY = 'xmlns="http://mns.aliyuncs.com/doc/v1"'


def body(root: str, inner: str = "") -> str:
    return f'<?xml version="1.0" encoding="UTF-8"?><{root} {XMLNS_BODY}>{inner}</{root}>'


def texts(response, tag: str) -> list[str]:
    return [node.text or "" for node in response.xml().iter(NS + tag)]


@pytest.fixture
def v4(endpoint) -> RawClient:
    return RawClient(endpoint, ACCOUNT_A[1], ACCOUNT_A[2], region=REGION)


def test_every_queue_operation_signed_v4(v4):
    q = "v4-" + uuid.uuid4().hex[:16]
    assert v4.request("PUT", f"/queues/{q}", body("Queue", "<VisibilityTimeout>30</VisibilityTimeout>")).status == 201
    changed = v4.request(
        "PUT", f"/queues/{q}?metaoverride=true", body("Queue", "<PollingWaitSeconds>1</PollingWaitSeconds>")
    )
    assert changed.status == 204, changed.body
    attributes = v4.request("GET", f"/queues/{q}")
    assert attributes.status == 200 and texts(attributes, "PollingWaitSeconds") == ["1"]
    listed = v4.request("GET", "/queues", headers={"x-mns-prefix": q, "x-mns-ret-number": "10"})
    assert listed.status == 200 and texts(listed, "QueueName") == [q]

    sent = v4.request("POST", f"/queues/{q}/messages", body("Message", "<MessageBody>one</MessageBody>"))
    assert sent.status == 201 and texts(sent, "MessageId")
    batch = "".join(f"<Message><MessageBody>{b}</MessageBody></Message>" for b in ("two", "three"))
    assert v4.request("POST", f"/queues/{q}/messages", body("Messages", batch)).status == 201
    peeked = v4.request("GET", f"/queues/{q}/messages?peekonly=true")
    assert peeked.status == 200 and texts(peeked, "MessageBody")
    assert len(texts(v4.request("GET", f"/queues/{q}/messages?peekonly=true&numOfMessages=3"), "MessageBody")) == 3

    received = v4.request("GET", f"/queues/{q}/messages?waitseconds=1")
    assert received.status == 200
    (handle,) = texts(received, "ReceiptHandle")
    changed = v4.request("PUT", f"/queues/{q}/messages?ReceiptHandle={handle}&VisibilityTimeout=10")
    assert changed.status == 200, changed.body
    (handle,) = texts(changed, "ReceiptHandle")
    assert v4.request("DELETE", f"/queues/{q}/messages?ReceiptHandle={handle}").status == 204
    batch_received = v4.request("GET", f"/queues/{q}/messages?numOfMessages=2&waitseconds=1")
    handles = texts(batch_received, "ReceiptHandle")
    assert batch_received.status == 200 and len(handles) == 2
    listing = "".join(f"<ReceiptHandle>{h}</ReceiptHandle>" for h in handles)
    assert v4.request("DELETE", f"/queues/{q}/messages", body("ReceiptHandles", listing)).status == 204
    assert_mns_error(v4.request("GET", f"/queues/{q}/messages"), 404, "MessageNotExist")
    assert v4.request("DELETE", f"/queues/{q}").status == 204
    assert_mns_error(v4.request("GET", f"/queues/{q}"), 404, "QueueNotExist")


def test_every_topic_and_account_operation_signed_v4(v4):
    t, q = "v4t-" + uuid.uuid4().hex[:16], "v4q-" + uuid.uuid4().hex[:16]
    assert v4.request("PUT", f"/queues/{q}").status == 201
    assert v4.request("PUT", f"/topics/{t}").status == 201
    changed = v4.request(
        "PUT", f"/topics/{t}?metaoverride=true", body("Topic", "<LoggingEnabled>True</LoggingEnabled>")
    )
    assert changed.status == 204, changed.body
    assert texts(v4.request("GET", f"/topics/{t}"), "LoggingEnabled") == ["True"]
    listed = v4.request("GET", "/topics", headers={"x-mns-prefix": t, "x-mns-with-meta": "true"})
    assert listed.status == 200 and texts(listed, "TopicName") == [t]

    endpoint = f"acs:mns:{REGION}:{ACCOUNT_A[0]}:queues/{q}"
    subscription = body(
        "Subscription", f"<Endpoint>{endpoint}</Endpoint><NotifyContentFormat>SIMPLIFIED</NotifyContentFormat>"
    )
    assert v4.request("PUT", f"/topics/{t}/subscriptions/s", subscription).status == 201
    strategy = body("Subscription", "<NotifyStrategy>EXPONENTIAL_DECAY_RETRY</NotifyStrategy>")
    assert v4.request("PUT", f"/topics/{t}/subscriptions/s?metaoverride=true", strategy).status == 204
    attributes = v4.request("GET", f"/topics/{t}/subscriptions/s")
    assert texts(attributes, "NotifyStrategy") == ["EXPONENTIAL_DECAY_RETRY"]
    (url,) = texts(v4.request("GET", f"/topics/{t}/subscriptions"), "SubscriptionURL")
    assert url.endswith(f"/topics/{t}/subscriptions/s")
    with_meta = v4.request("GET", f"/topics/{t}/subscriptions", headers={"x-mns-with-meta": "true"})
    assert (texts(with_meta, "SubscriptionName"), texts(with_meta, "Endpoint")) == (["s"], [endpoint])

    published = v4.request("POST", f"/topics/{t}/messages", body("Message", "<MessageBody>hi v4</MessageBody>"))
    assert published.status == 201 and texts(published, "MessageId")
    delivered = v4.request("GET", f"/queues/{q}/messages?waitseconds=10")
    assert texts(delivered, "MessageBody") == ["hi v4"], delivered.body

    assert v4.request("DELETE", f"/topics/{t}/subscriptions/s").status == 204
    assert_mns_error(v4.request("GET", f"/topics/{t}/subscriptions/s"), 404, "SubscriptionNotExist")
    assert v4.request("DELETE", f"/topics/{t}").status == 204
    assert v4.request("DELETE", f"/queues/{q}").status == 204

    assert v4.request("GET", "/?accountmeta=true").status == 200
    account = body("Account", "<LoggingBucket>v4-bucket</LoggingBucket>")
    assert v4.request("PUT", "/?accountmeta=true", account).status == 204
    assert texts(v4.request("GET", "/?accountmeta=true"), "LoggingBucket") == ["v4-bucket"]


def test_bad_v4_signatures_and_scopes_are_refused(endpoint):
    def client(**changes: str) -> RawClient:
        given = {"key_id": ACCOUNT_A[1], "secret": ACCOUNT_A[2], "region": REGION, **changes}
        return RawClient(endpoint, given["key_id"], given["secret"], region=given["region"])

    assert_mns_error(client(secret="WRONG").request("GET", "/queues"), 403, "SignatureDoesNotMatch")
    assert_mns_error(client(key_id="NOSUCHKEY").request("GET", "/queues"), 403, "InvalidAccessKeyId")
    other_region = client(region="eu-west-1").request("GET", "/queues")
    assert_mns_error(other_region, 403, "SignatureDoesNotMatch")
    assert b"region eu-west-1" in other_region.body
    stale = formatdate(time.time() - 3600, usegmt=True)
    assert_mns_error(client().request("GET", "/queues", date=stale), 408, "TimeExpired")


def test_a_v4_scope_of_another_date_or_service_and_a_tampered_header_are_refused(endpoint):
    """One request's V4 Authorization, sent as signed (accepted), then with its scope's date or service changed, its
    credential misnamed, or a signed header added after signing."""
    date = formatdate(usegmt=True)
    headers = {"Date": date, "Content-Type": "text/xml;charset=UTF-8", "x-mns-version": "2015-06-06"}
    signed = V4Request("GET", "/queues", parsedate_to_datetime(date), headers=headers)
    authorization = V4Signer().authorization(ACCOUNT_A[1], ACCOUNT_A[2], signed, REGION)
    day = parsedate_to_datetime(date).strftime("%Y%m%d")
    unsigned = RawClient(endpoint, ACCOUNT_A[1], ACCOUNT_A[2])

    def send(value: str, **extra: str):
        return unsigned.request(
            "GET", "/queues", sign_request=False, date=date, headers={"Authorization": value, **extra}
        )

    assert send(authorization).status == 200
    assert_mns_error(send(authorization.replace(f"/{day}/", "/20200101/")), 403, "SignatureDoesNotMatch")
    assert_mns_error(send(authorization.replace("/mns/", "/oss/")), 403, "SignatureDoesNotMatch")
    assert_mns_error(send(authorization.replace("Credential=", "Credentials=")), 400, "InvalidAuthorizationHeader")
    assert_mns_error(send(authorization, **{"x-mns-ret-number": "1"}), 403, "SignatureDoesNotMatch")


LIMITED = ("V4LIMITEDKEY", "V4LIMITEDSECRET")  # a key of account A whose policy allows only sends


@pytest.fixture(scope="module")
def sts_endpoint(tmp_path_factory, engine):
    keys_file = tmp_path_factory.mktemp("v4-keys") / "keys.json"
    sends_only = {
        "Version": "1",
        "Statement": [{"Effect": "Allow", "Action": "mns:SendMessage", "Resource": "*"}],
    }
    key = {"account": ACCOUNT_A[0], "id": LIMITED[0], "secret": LIMITED[1], "policy": sends_only}
    keys_file.write_text(json.dumps({"keys": [key]}))
    with local_server(tmp_path_factory, engine, "v4-sts", MNS_KEYS_FILE=str(keys_file)) as url:
        yield url


def test_temporary_credentials_and_their_policy_under_v4(sts_endpoint):
    """A token issued under V4, used under V4: its key signs, its policy allows messages and refuses the rest."""
    root = RawClient(sts_endpoint, ACCOUNT_A[1], ACCOUNT_A[2], region=REGION)
    q = "v4sts-" + uuid.uuid4().hex[:12]
    assert root.request("PUT", f"/queues/{q}").status == 201
    issued = root.request(
        "POST",
        "/?securitytoken=true",
        body("SecurityToken", f"<DurationSeconds>900</DurationSeconds><Policy>{json.dumps(MESSAGES_ONLY)}</Policy>"),
    )
    assert issued.status == 200, issued.body
    credentials = {child.tag.removeprefix(NS): child.text or "" for child in issued.xml()}
    temporary = RawClient(sts_endpoint, credentials["AccessKeyId"], credentials["AccessKeySecret"], region=REGION)
    token = {"security-token": credentials["SecurityToken"]}
    sent = temporary.request(
        "POST", f"/queues/{q}/messages", body("Message", "<MessageBody>t</MessageBody>"), headers=token
    )
    assert sent.status == 201, sent.body
    received = temporary.request("GET", f"/queues/{q}/messages?waitseconds=1", headers=token)
    assert texts(received, "MessageBody") == ["t"]
    refused = temporary.request("GET", f"/queues/{q}", headers=token)
    assert_mns_error(refused, 403, "AccessDenied")
    assert_mns_error(temporary.request("GET", f"/queues/{q}/messages", headers={}), 403, "InvalidAccessKeyId")
    wrong_secret = RawClient(sts_endpoint, credentials["AccessKeyId"], "WRONG", region=REGION)
    assert_mns_error(wrong_secret.request("GET", f"/queues/{q}/messages", headers=token), 403, "SignatureDoesNotMatch")


def test_a_policy_limited_key_under_v4(sts_endpoint):
    """A key whose policy allows only SendMessage: allowed to send, refused the rest, signing V4."""
    q = "v4lim-" + uuid.uuid4().hex[:12]
    assert (
        RawClient(sts_endpoint, ACCOUNT_A[1], ACCOUNT_A[2], region=REGION).request("PUT", f"/queues/{q}").status == 201
    )
    limited = RawClient(sts_endpoint, *LIMITED, region=REGION)
    sent = limited.request("POST", f"/queues/{q}/messages", body("Message", "<MessageBody>x</MessageBody>"))
    assert sent.status == 201, sent.body
    refused = limited.request("GET", f"/queues/{q}/messages")
    assert_mns_error(refused, 403, "AccessDenied")
    assert b"mns:ReceiveMessage" in refused.body
    assert_mns_error(limited.request("DELETE", f"/queues/{q}"), 403, "AccessDenied")


def test_sharing_under_v4(endpoint, raw_a):
    """Account B reaches account A's queue by naming A in the host, signing V4 with its own key: refused until A's
    queue policy grants it, then allowed."""
    q = "v4shr-" + uuid.uuid4().hex[:12]
    assert raw_a.request("PUT", f"/queues/{q}").status == 201
    owner_host = f"{ACCOUNT_A[0]}.mns.localhost:{endpoint.rsplit(':', 1)[1]}"
    b = RawClient(endpoint, ACCOUNT_B[1], ACCOUNT_B[2], region=REGION)
    message = body("Message", "<MessageBody>from B</MessageBody>")
    assert_mns_error(b.request("POST", f"/queues/{q}/messages", message, host=owner_host), 403, "AccessDenied")
    grant = grant_document(ACCOUNT_B[0], ["mns:SendMessage"], [f"acs:mns:*:{ACCOUNT_A[0]}:/queues/{q}*"])
    policy = body("Queue", f"<Policy>{json.dumps(grant)}</Policy>")
    assert raw_a.request("PUT", f"/queues/{q}?metaoverride=true", policy).status == 204
    sent = b.request("POST", f"/queues/{q}/messages", message, host=owner_host)
    assert sent.status == 201, sent.body
    assert_mns_error(b.request("GET", f"/queues/{q}", host=owner_host), 403, "AccessDenied")
    assert b.request("GET", f"/queues/{q}").status != 200  # its own account has no such queue
