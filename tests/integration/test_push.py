"""Push delivery over moto: first attempts at fan-out, retries run by the state machine moto executes.

The state machine is the one the CDK app deploys (`mnsd.push.workflow.definition`); its attempts go
through SQS to the same worker code as on AWS. Where a schedule would take minutes or a day, moto's
waits are recorded instead of slept, so the schedule itself is what is checked.
"""

from __future__ import annotations

import json
import time
import xml.etree.ElementTree as ET
from datetime import UTC, datetime
from email.utils import formatdate

import pytest

from mnsd.ground.http import HttpRequest, HttpResponse
from mnsd.push.workflow import delivery_reference
from mnsd.request import api
from tests.support.push import ACCOUNT, REGION, Push
from tests.support.signers import V4Request, V4Signer

MOTO_ACCOUNT = "123456789012"


def test_a_first_attempt_that_succeeds_starts_no_execution(push, push_endpoint):
    topic = push.topic()
    push.subscribe(topic, "s", push_endpoint.url("/hook"))
    _, outcomes = push.publish(topic)
    assert outcomes["s"].delivered and outcomes["s"].status == 204
    assert len(push_endpoint.hits) == 1 and push_endpoint.hits[0].signature_valid
    assert push.executions() == [] and push.counters.executions_started == 0


def test_a_failed_first_attempt_is_retried_by_the_state_machine(push, push_endpoint):
    push_endpoint.status_for = lambda n: 503 if n == 1 else 204
    topic = push.topic()
    push.subscribe(topic, "s", push_endpoint.url("/hook"), NotifyStrategy="EXPONENTIAL_DECAY_RETRY")
    _, outcomes = push.publish(topic)
    assert not outcomes["s"].delivered and outcomes["s"].status == 503
    (execution,) = push.wait_finished(timeout=20)
    assert execution["status"] == "SUCCEEDED"
    hits = push_endpoint.wait_for(2, timeout=5)
    assert [h.status for h in hits] == [503, 204]
    assert 0.9 <= hits[1].at - hits[0].at < 3  # the first retry comes after 1 s
    assert push.log("drop") == []


def test_exponential_decay_retry_is_176_retries_over_one_day(push, push_endpoint, recorded_waits):
    push_endpoint.status_for = lambda n: 500
    topic = push.topic()
    push.subscribe(topic, "s", push_endpoint.url("/hook"), NotifyStrategy="EXPONENTIAL_DECAY_RETRY")
    push.publish(topic)
    (execution,) = push.wait_finished(timeout=240)  # 177 attempts through moto (about 15 s on an idle machine)
    assert execution["status"] == "SUCCEEDED"  # the Drop state ends it
    waits = [seconds for _, seconds in recorded_waits]
    assert waits == [1, 2, 4, 8, 16, 32, 64, 128, 256] + [512] * 167
    assert sum(waits) == 86_015  # one day (86,400 s) minus the last interval's slack
    assert len(push_endpoint.hits) == 1 + 176
    (drop,) = push.wait_for_log("drop", 1)
    assert drop["subscription"] == "s" and drop["resource"] == topic


def test_backoff_retry_is_three_retries_after_random_waits_of_10_to_20_seconds(push, push_endpoint, recorded_waits):
    push_endpoint.status_for = lambda n: 500
    topic = push.topic()
    push.subscribe(topic, "s", push_endpoint.url("/hook"))  # BACKOFF_RETRY is the default
    push.publish(topic)
    (execution,) = push.wait_finished(timeout=30)
    assert execution["status"] == "SUCCEEDED"
    assert [kind for kind, _ in recorded_waits] == ["wait"] * 3
    assert all(10 <= seconds <= 20 for _, seconds in recorded_waits)
    assert len(push_endpoint.hits) == 4
    assert len(push.wait_for_log("drop", 1)) == 1


def test_backoff_waits_are_drawn_across_the_whole_range(push, push_endpoint, recorded_waits):
    push_endpoint.status_for = lambda n: 500
    topic = push.topic()
    for i in range(8):
        push.subscribe(topic, f"s{i}", push_endpoint.url(f"/s{i}"))
    push.publish(topic)
    push.wait_finished(timeout=60)
    drawn = [seconds for _, seconds in recorded_waits]
    assert len(drawn) == 24 and all(10 <= s <= 20 for s in drawn)
    assert len(set(drawn)) >= 4  # uniform over 11 values: 24 draws with fewer than 4 distinct is ~1e-10


def test_unsubscribing_stops_the_retries(push, push_endpoint):
    push_endpoint.status_for = lambda n: 500
    topic = push.topic()
    push.subscribe(topic, "s", push_endpoint.url("/hook"), NotifyStrategy="EXPONENTIAL_DECAY_RETRY")
    push.publish(topic)
    push.topics.unsubscribe(ACCOUNT, topic, "s")
    (execution,) = push.wait_finished(timeout=20)
    assert execution["status"] == "SUCCEEDED"
    assert len(push_endpoint.hits) == 1
    assert push.log("drop") == []


def test_queue_endpoints_are_written_through_the_queue_service(push):
    push.services.queues.create_queue(ACCOUNT, "q", None)
    topic = push.topic()
    push.subscribe(topic, "s", f"acs:mns:{REGION}:{ACCOUNT}:queues/q", NotifyContentFormat="JSON")
    message, outcomes = push.publish(topic, "payload")
    assert outcomes["s"].delivered
    (received,) = push.services.messages.receive(push.services.addresses.resolve(ACCOUNT, "q"), 1, 0)
    notification = json.loads(received.message.body)
    assert notification["Message"] == "payload" and notification["MessageId"] == message.message_id
    assert notification["TopicName"] == topic and notification["SubscriptionName"] == "s"


def test_a_missing_queue_fails_the_attempt_and_is_retried(push):
    topic = push.topic()
    push.subscribe(topic, "s", f"acs:mns:{REGION}:{ACCOUNT}:queues/later", NotifyStrategy="EXPONENTIAL_DECAY_RETRY")
    _, outcomes = push.publish(topic, "payload")
    assert not outcomes["s"].delivered and "QueueNotExist" in outcomes["s"].detail
    push.services.queues.create_queue(ACCOUNT, "later", None)
    push.wait_finished(timeout=20)
    (received,) = push.services.messages.receive(push.services.addresses.resolve(ACCOUNT, "later"), 1, 0)
    assert "<Message>payload</Message>" in received.message.body


def test_mail_endpoints_send_through_ses(push):
    from moto.ses.models import ses_backends

    push.clients("ses").verify_email_identity(EmailAddress="sender@example.com")
    topic = push.topic()
    push.subscribe(topic, "m", "mail:directmail:someone@example.com")
    mail = json.dumps({"AccountName": "sender@example.com", "Subject": "Hi", "AddressType": 0, "IsHtml": 0})
    _, outcomes = push.publish(
        topic, "mail body", f"<MessageAttributes><DirectMail>{mail}</DirectMail></MessageAttributes>"
    )
    assert outcomes["m"].delivered
    (sent,) = ses_backends[MOTO_ACCOUNT]["us-east-1"].sent_messages
    assert (sent.source, sent.subject, sent.body) == ("sender@example.com", "Hi", "mail body")
    assert sent.destinations["ToAddresses"] == ["someone@example.com"]


def test_a_mail_message_without_direct_mail_is_dropped_without_retries(push):
    topic = push.topic()
    push.subscribe(topic, "m", "mail:directmail:someone@example.com")
    _, outcomes = push.publish(topic, "no attributes")
    assert outcomes["m"].permanent and not outcomes["m"].delivered
    assert push.executions() == []
    (drop,) = push.log("drop")
    assert drop["endpoint_kind"] == "mail"


def test_sms_endpoints_send_through_sns(push):
    from moto.sns.models import sns_backends

    topic = push.topic()
    push.subscribe(topic, "one", "sms:directsms:13800000000")
    push.subscribe(topic, "many", "sms:directsms:anonymous")
    sms = json.dumps(
        {
            "FreeSignName": "Shop",
            "TemplateCode": "T1",
            "Type": "singleContent",
            "Receiver": "13900000001,13900000002",
            "SmsParams": json.dumps({"code": "1234"}),
        }
    )
    _, outcomes = push.publish(
        topic, "code ${code}", f"<MessageAttributes><DirectSMS>{sms}</DirectSMS></MessageAttributes>"
    )
    assert outcomes["one"].delivered and outcomes["many"].delivered
    sent = sorted(sns_backends[MOTO_ACCOUNT]["us-east-1"].sms_messages.values())
    assert sent == [(n, "【Shop】code 1234") for n in ("13800000000", "13900000001", "13900000002")]


def test_logging_enabled_topics_record_every_push_attempt(push, push_endpoint):
    push_endpoint.status_for = lambda n: 500 if n == 1 else 204
    topic = push.topic("logged", logging=True)
    push.subscribe(topic, "s", push_endpoint.url("/hook"), NotifyStrategy="EXPONENTIAL_DECAY_RETRY")
    message, _ = push.publish(topic)
    push.wait_finished(timeout=20)
    records = push.log("push")
    assert [(r["attempt"], r["outcome"], r["status"]) for r in records] == [
        ("1", "failure", "500"),
        ("2", "success", "204"),
    ]
    assert all(r["message_id"] == message.message_id and r["pk"] == f"{ACCOUNT}#topic#logged" for r in records)
    assert int(records[1]["latency_ms"]) >= 1000


def test_a_log_outage_neither_fails_the_fan_out_nor_pushes_twice(push, push_endpoint, monkeypatch):
    topic = push.topic("logged", logging=True)
    push.subscribe(topic, "s", push_endpoint.url("/hook"))

    def unavailable(records):
        raise RuntimeError("log table throttled")

    monkeypatch.setattr(push.services.storage.log, "write", unavailable)
    _, outcomes = push.publish(topic)  # the stream batch would be retried if this raised
    assert outcomes["s"].delivered
    time.sleep(0.5)
    assert len(push_endpoint.hits) == 1 and push.executions() == []


def test_a_retry_whose_task_is_no_longer_awaited_is_not_attempted_nor_brought_back(push, push_endpoint):
    """The worker crashed past the Task's timeout: SQS brings the message back with a token no longer awaited."""
    topic = push.topic()
    push.subscribe(topic, "s", push_endpoint.url("/hook"))
    message, _ = push.publish(topic)
    (subscription,) = push.topics.subscriptions_of(message)
    task = {"delivery": delivery_reference(subscription, message), "token": "expired", "retry": 1}

    push.retries.handle_task(task)  # the heartbeat is refused (InvalidToken): no attempt, no error, SQS deletes it

    assert len(push_endpoint.hits) == 1  # the first attempt at fan-out only


def test_a_retry_that_waited_past_its_task_timeout_is_not_pushed_after_the_next_one(moto, push_endpoint):
    """A retry's message waits in the push queue until its Task times out; the execution schedules the next
    retry. The worker, taking both up late, must push once: the stale one is not attempted."""
    push = Push(push_endpoint, heartbeat_seconds=3, start_worker=False)
    try:
        push_endpoint.status_for = lambda n: 503 if n == 1 else 204
        topic = push.topic()
        push.subscribe(topic, "s", push_endpoint.url("/hook"), NotifyStrategy="EXPONENTIAL_DECAY_RETRY")
        push.publish(topic)
        sqs = push.clients("sqs")
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:  # 1 s wait, 3 s without a heartbeat, 2 s before the next retry
            attributes = sqs.get_queue_attributes(QueueUrl=push.queue_url, AttributeNames=["All"])["Attributes"]
            if int(attributes["ApproximateNumberOfMessages"]) == 2:
                break
            time.sleep(0.1)
        else:
            raise AssertionError("the timed-out retry was not followed by the next one")
        push.worker.start()
        (execution,) = push.wait_finished(timeout=20)
        assert execution["status"] == "SUCCEEDED"
        time.sleep(1.0)  # a push of the stale retry would have come by now
        assert [h.status for h in push_endpoint.hits] == [503, 204]
    finally:
        push.worker.stop()


def test_a_subscription_lookup_that_fails_fails_the_task_instead_of_skipping_it(push, push_endpoint, monkeypatch):
    """Only a subscription that no longer exists ends its retries; a throttled table makes the task fail,
    so SQS brings it back."""
    from botocore.exceptions import ClientError

    topic = push.topic()
    push.subscribe(topic, "s", push_endpoint.url("/hook"))
    message, _ = push.publish(topic)
    (subscription,) = push.topics.subscriptions_of(message)
    answers = []
    monkeypatch.setattr(push.workflow.client, "send_task_success", lambda **kw: answers.append(kw))
    monkeypatch.setattr(push.workflow.client, "send_task_failure", lambda **kw: answers.append(kw))

    def throttled(*args):
        raise ClientError({"Error": {"Code": "ProvisionedThroughputExceededException"}}, "GetItem")

    monkeypatch.setattr(push.topics, "get_subscription", throttled)
    task = {"delivery": delivery_reference(subscription, message), "token": "t", "retry": 1}
    with pytest.raises(ClientError):
        push.retries.handle_task(task)
    with pytest.raises(ClientError):
        push.retries.handle_task({"delivery": task["delivery"], "drop": True})
    assert answers == [] and len(push_endpoint.hits) == 1


def test_an_unsubscribed_subscription_ends_its_retries(push, push_endpoint, monkeypatch):
    topic = push.topic()
    push.subscribe(topic, "s", push_endpoint.url("/hook"))
    message, _ = push.publish(topic)
    (subscription,) = push.topics.subscriptions_of(message)
    push.topics.unsubscribe(ACCOUNT, topic, "s")
    answers = []
    monkeypatch.setattr(push.workflow.client, "send_task_success", lambda **kw: answers.append(kw))
    push.retries.handle_task({"delivery": delivery_reference(subscription, message), "token": "t", "retry": 1})
    assert answers == [{"taskToken": "t", "output": json.dumps({"skipped": True})}]


def test_topics_without_logging_record_no_push_attempts(push, push_endpoint):
    topic = push.topic()
    push.subscribe(topic, "s", push_endpoint.url("/hook"))
    push.publish(topic)
    assert push.log() == []


def test_a_redirect_is_not_a_delivery(push, push_endpoint):
    push_endpoint.status_for = lambda n: 302
    topic = push.topic()
    push.subscribe(topic, "s", push_endpoint.url("/moved"), NotifyStrategy="BACKOFF_RETRY")
    _, outcomes = push.publish(topic)
    assert not outcomes["s"].delivered and outcomes["s"].status == 302
    assert len(push_endpoint.hits) == 1


# --- Java SDK 2.x's DM and DYSMS attributes, from its signed request to SES and SNS ----------------------------------


def java2_publish(push: Push, topic: str, body: str, attributes: str) -> HttpResponse:
    """PublishMessage as Java SDK 2.x sends it: its `TopicMessageSerializer`'s XML (the attributes' element made
    without a namespace, each attribute Gson's JSON of `DmAttributes` / `DysmsAttributes`), its headers, and its
    `MNS4-HMAC-SHA256` signature (`tests/support/signers.py`), through the API's request path."""
    xml = (
        '<?xml version="1.0" encoding="UTF-8" standalone="no"?>'
        f'<Message xmlns="http://mns.aliyuncs.com/doc/v1"><MessageBody>{body}</MessageBody>'
        f"<MessageAttributes>{attributes}</MessageAttributes></Message>"
    ).encode()
    path = f"/topics/{topic}/messages"
    now = time.time()
    headers = {
        "host": "127.0.0.1:8080",
        "date": formatdate(now, usegmt=True),
        "content-type": "text/xml;charset=UTF-8",
        "x-mns-version": "2015-06-06",
    }
    signed = V4Request("POST", path, datetime.fromtimestamp(now, UTC), headers=dict(headers))
    headers["authorization"] = V4Signer().authorization("KEYID", "SECRET", signed, REGION)
    request = HttpRequest("POST", path, "", headers, xml, {"topic": topic})
    return api.handle("post_topic_messages", request, push.services)


def test_java2_dm_and_dysms_are_delivered_by_a_mail_and_an_sms_subscription(push):
    from moto.ses.models import ses_backends
    from moto.sns.models import sns_backends

    push.clients("ses").verify_email_identity(EmailAddress="sender@example.com")
    topic = push.topic()
    push.subscribe(topic, "mail", "mail:directmail:someone@example.com")
    push.subscribe(topic, "sms", "sms:directsms:anonymous")
    dm = '{"MailAddress":"sender@example.com","Subject":"Hi","IsHtml":1}'
    dysms = '{"PhoneNumber":"13800000000"}'
    answer = java2_publish(push, topic, "&lt;b&gt;order shipped&lt;/b&gt;", f"<DYSMS>{dysms}</DYSMS><DM>{dm}</DM>")
    assert answer.status == 201, answer.body
    message_id = ET.fromstring(answer.body).findtext("{http://mns.aliyuncs.com/doc/v1}MessageId")
    topic_id = push.topics.get_topic(ACCOUNT, topic).topic_id
    message = push.services.topics.messages.get(topic_id, message_id, int(time.time() * 1000))
    outcomes = push.fanout.fan_out(message)  # what the topic message table's stream starts on AWS
    assert outcomes["mail"].delivered and outcomes["sms"].delivered, outcomes
    (sent,) = ses_backends[MOTO_ACCOUNT]["us-east-1"].sent_messages
    assert (sent.source, sent.subject, sent.body) == ("sender@example.com", "Hi", "<b>order shipped</b>")
    assert sent.destinations["ToAddresses"] == ["someone@example.com"]
    assert sorted(sns_backends[MOTO_ACCOUNT]["us-east-1"].sms_messages.values()) == [
        ("13800000000", "<b>order shipped</b>")
    ]


@pytest.mark.parametrize(
    "attributes",
    [
        "<DM>{not json</DM>",
        "<DYSMS>[1, 2]</DYSMS>",
        '<DYSMS>{"PhoneNumber":"abcdefg"}</DYSMS>',  # what the Java SDK's own check refuses
        '<DM>{"MailAddress":"a@example.com"}</DM><DirectMail>{"AccountName":"b@example.com","Subject":"x"}</DirectMail>',
    ],
)
def test_java2_attributes_that_are_malformed_are_refused(push, attributes):
    topic = push.topic()
    push.subscribe(topic, "mail", "mail:directmail:someone@example.com")
    answer = java2_publish(push, topic, "body", attributes)
    assert answer.status == 400
    assert ET.fromstring(answer.body).findtext("{http://mns.aliyuncs.com/doc/v1}Code") == "InvalidArgument"
    assert push.executions() == []
