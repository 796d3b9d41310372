"""Subscriptions' dead-letter queues over moto: a push given up goes to the DlqPolicy's queue.

The retry schedules run in the state machine the CDK app deploys, executed by moto, with its waits
recorded instead of slept (see `test_push.py`); the push worker's code handles the exhausted branch.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from mnsd.entry.push import make_push_worker_handler
from mnsd.ground import errors
from mnsd.push.records import DEAD_LETTERED
from mnsd.push.workflow import definition, delivery_reference
from mnsd.queues.messages import Received
from tests.support.push import ACCOUNT, REGION, Push

NS = "{http://mns.aliyuncs.com/doc/v1}"
# The push harness's fixtures (services over moto with the workflow running; moto's waits recorded).
POLICY = "<Enabled>True</Enabled><DeadLetterTargetQueue>dlq</DeadLetterTargetQueue>"


def dead_letters(push: Push, queue: str = "dlq") -> list[Received]:
    try:
        return push.services.messages.receive(push.services.addresses.resolve(ACCOUNT, queue), 16, 0)
    except errors.MessageNotExist:
        return []


def system_properties(received: Received) -> dict[str, str]:
    assert all(p.type == "STRING" for p in received.message.system_properties)
    return {p.name: p.value for p in received.message.system_properties}


def origin(topic: str, subscription: str, message_id: str) -> dict[str, str]:
    return {
        "DLQMessageType": "SUBSCRIPTION",
        "DLQSourceArn": f"acs:mns:{REGION}:{ACCOUNT}:topics/{topic}/subscriptions/{subscription}",
        "DLQOriginMessageId": message_id,
    }


def test_backoff_retry_exhausted_dead_letters_the_xml_notification(push, push_endpoint, recorded_waits):
    push_endpoint.status_for = lambda n: 500
    push.services.queues.create_queue(ACCOUNT, "dlq", None)
    topic = push.topic()
    push.subscribe(topic, "s", push_endpoint.url("/hook"), DlqPolicy=POLICY)
    message, _ = push.publish(topic, "never delivered", "<MessageTag>news</MessageTag>")
    (execution,) = push.wait_finished(timeout=30)
    assert execution["status"] == "SUCCEEDED" and len(push_endpoint.hits) == 4
    (drop,) = push.wait_for_log("drop", 1)
    assert drop["outcome"] == DEAD_LETTERED
    (received,) = dead_letters(push)
    assert received.message.body.encode() == push_endpoint.hits[-1].body  # what the endpoint was sent
    fields = {child.tag[len(NS) :]: child.text for child in ET.fromstring(received.message.body)}
    assert fields["Message"] == "never delivered" and fields["MessageId"] == message.message_id
    assert fields["SubscriptionName"] == "s" and fields["MessageTag"] == "news"
    assert system_properties(received) == origin(topic, "s", message.message_id)
    assert push.counters.dead_letters == 1 and push.counters.drops == 0


def test_exponential_decay_retry_exhausted_dead_letters_the_json_notification(push, push_endpoint, recorded_waits):
    push_endpoint.status_for = lambda n: 500
    push.services.queues.create_queue(ACCOUNT, "dlq", None)
    topic = push.topic()
    push.subscribe(
        topic,
        "s",
        push_endpoint.url("/hook"),
        NotifyStrategy="EXPONENTIAL_DECAY_RETRY",
        NotifyContentFormat="JSON",
        DlqPolicy=POLICY,
    )
    message, _ = push.publish(topic, "a day of failures")
    assert dead_letters(push) == []  # not before the last retry
    (execution,) = push.wait_finished(timeout=240)  # 177 attempts through moto
    assert execution["status"] == "SUCCEEDED" and len(push_endpoint.hits) == 177
    push.wait_for_log("drop", 1)
    (received,) = dead_letters(push)
    notification = json.loads(received.message.body)
    assert notification["Message"] == "a day of failures" and notification["MessageId"] == message.message_id
    assert received.message.body.encode() == push_endpoint.hits[-1].body
    assert system_properties(received) == origin(topic, "s", message.message_id)


def test_a_push_that_fails_for_good_is_dead_lettered_at_once(push):
    """A mail message without DirectMail is not retried: it goes to the DLQ at fan-out (SIMPLIFIED: the body)."""
    push.services.queues.create_queue(ACCOUNT, "dlq", None)
    topic = push.topic()
    push.subscribe(topic, "m", "mail:directmail:someone@example.com", DlqPolicy=POLICY)
    user = "<UserProperties><PropertyValue><Name>k</Name><Value>v</Value><Type>STRING</Type></PropertyValue>"
    message, outcomes = push.publish(topic, "no attributes", user + "</UserProperties>")
    assert outcomes["m"].permanent and push.executions() == []
    (received,) = dead_letters(push)
    assert received.message.body == "no attributes"
    assert system_properties(received) == origin(topic, "m", message.message_id)
    assert [(p.name, p.value) for p in received.message.user_properties] == [("k", "v")]
    (drop,) = push.log("drop")
    assert drop["outcome"] == DEAD_LETTERED


def test_without_an_enabled_policy_an_exhausted_push_is_dropped(push, push_endpoint, recorded_waits):
    push_endpoint.status_for = lambda n: 500
    push.services.queues.create_queue(ACCOUNT, "dlq", None)
    topic = push.topic()
    push.subscribe(topic, "none", push_endpoint.url("/a"))
    push.subscribe(topic, "off", push_endpoint.url("/b"), DlqPolicy=POLICY.replace("True", "False"))
    push.publish(topic)
    push.wait_finished(timeout=30)
    drops = push.wait_for_log("drop", 2)
    assert sorted(d["subscription"] for d in drops) == ["none", "off"]
    assert all("outcome" not in d for d in drops)
    assert dead_letters(push) == [] and push.counters.drops == 2 and push.counters.dead_letters == 0


def test_a_policy_set_after_subscribing_applies_to_the_retries_under_way(push, push_endpoint, recorded_waits):
    from mnsd.model.topics import DlqPolicyInput, SubscriptionChanges

    push_endpoint.status_for = lambda n: 500
    push.services.queues.create_queue(ACCOUNT, "dlq", None)
    topic = push.topic()
    push.subscribe(topic, "s", push_endpoint.url("/hook"))
    message, _ = push.publish(topic)
    push.topics.set_subscription_attributes(
        ACCOUNT, topic, "s", SubscriptionChanges(dlq_policy=DlqPolicyInput("True", "dlq"))
    )
    push.wait_finished(timeout=30)
    push.wait_for_log("drop", 1)
    (received,) = dead_letters(push)
    assert system_properties(received)["DLQOriginMessageId"] == message.message_id


def exhausted_task(push: Push, topic: str) -> dict:
    message, _ = push.publish(topic)
    (subscription,) = push.topics.subscriptions_of(message)
    return {"delivery": delivery_reference(subscription, message), "drop": True}


def worker_event(*tasks: dict) -> dict:
    return {"Records": [{"messageId": f"m{i}", "body": json.dumps(task)} for i, task in enumerate(tasks)]}


class LambdaContext:
    function_name = "mns-push-worker"
    memory_limit_in_mb = 256
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:mns-push-worker"
    aws_request_id = "test"


def test_the_push_worker_function_dead_letters_the_exhausted_branchs_task(push, monkeypatch):
    monkeypatch.setenv("POWERTOOLS_METRICS_NAMESPACE", "MNS")
    push.worker.stop()
    push.services.queues.create_queue(ACCOUNT, "dlq", None)
    topic = push.topic()
    push.subscribe(topic, "s", f"acs:mns:{REGION}:{ACCOUNT}:queues/missing", DlqPolicy=POLICY)
    task = exhausted_task(push, topic)
    handler = make_push_worker_handler(lambda: push.services)
    assert handler(worker_event(task), LambdaContext()) == {"batchItemFailures": []}
    (received,) = dead_letters(push)
    assert system_properties(received)["DLQOriginMessageId"] == task["delivery"]["message_id"]
    assert "<TopicName>" in received.message.body


def test_a_dead_letter_queue_that_fails_fails_the_task_so_it_comes_back(push, monkeypatch):
    """A throttled or unavailable queue store is not a drop: SQS brings the task back."""
    monkeypatch.setenv("POWERTOOLS_METRICS_NAMESPACE", "MNS")
    push.worker.stop()
    push.services.queues.create_queue(ACCOUNT, "dlq", None)
    topic = push.topic()
    push.subscribe(topic, "s", "mail:directmail:a@example.com", DlqPolicy=POLICY)
    task = exhausted_task(push, topic)
    (dead_lettered,) = dead_letters(push)  # the publish's own permanent failure
    push.services.messages.delete(push.services.addresses.resolve(ACCOUNT, "dlq"), dead_lettered.receipt_handle)

    def unavailable(*args):
        raise RuntimeError("throttled")

    original = push.services.dead_letters.send
    monkeypatch.setattr(push.services.dead_letters, "send", unavailable)
    handler = make_push_worker_handler(lambda: push.services)
    assert handler(worker_event(task), LambdaContext()) == {"batchItemFailures": [{"itemIdentifier": "m0"}]}
    monkeypatch.setattr(push.services.dead_letters, "send", original)
    assert handler(worker_event(task), LambdaContext()) == {"batchItemFailures": []}
    assert len(dead_letters(push)) == 1


def test_a_dead_letter_queue_deleted_since_makes_the_push_a_drop(push):
    push.services.queues.create_queue(ACCOUNT, "dlq", None)
    topic = push.topic()
    push.subscribe(topic, "s", "mail:directmail:a@example.com", DlqPolicy=POLICY)
    push.services.queues.delete_queue(ACCOUNT, "dlq")
    push.retries.handle_task(exhausted_task(push, topic))  # no error: SQS would bring it back forever
    drops = push.log("drop")
    assert len(drops) == 2 and all("outcome" not in d for d in drops)  # the fan-out's and the task's
    assert push.counters.drops == 2


def test_every_exhausted_path_of_the_state_machine_leads_to_the_dead_letter_task():
    states = definition("QUEUE_URL")["States"]
    assert states["BackoffMore"]["Default"] == "Drop"
    assert states["BackoffAttempt"]["Catch"][0]["Next"] == "BackoffMore"
    assert states["ExponentialAttempt"]["Catch"] == [
        {"ErrorEquals": ["States.ALL"], "ResultPath": "$.error", "Next": "Drop"}
    ]
    drop = states["Drop"]
    assert drop["Resource"].endswith(":states:::sqs:sendMessage")
    assert drop["Parameters"] == {"QueueUrl": "QUEUE_URL", "MessageBody": {"delivery.$": "$.delivery", "drop": True}}


@pytest.mark.parametrize(
    ("policy", "code"),
    [
        ("<Enabled>True</Enabled><DeadLetterTargetQueue>absent</DeadLetterTargetQueue>", "QueueNotExist"),
        ("<Enabled>maybe</Enabled><DeadLetterTargetQueue>dlq</DeadLetterTargetQueue>", "InvalidArgument"),
        ("<Enabled>True</Enabled>", "InvalidArgument"),
    ],
)
def test_subscribe_checks_the_policy(push, policy, code):
    push.services.queues.create_queue(ACCOUNT, "dlq", None)
    push.services.queues.create_queue(ACCOUNT + "9", "absent", None)  # another account's queue is not a target
    topic = push.topic()
    with pytest.raises(errors.MnsError) as raised:
        push.subscribe(topic, "s", "http://127.0.0.1:9/hook", DlqPolicy=policy)
    assert raised.value.code == code


def test_a_dead_letter_that_fails_at_fan_out_is_a_drop_not_a_second_fan_out(push, push_endpoint, monkeypatch):
    """Failing the fan-out would push to every other subscription again: the failure is logged and recorded."""
    push.services.queues.create_queue(ACCOUNT, "dlq", None)
    topic = push.topic()
    push.subscribe(topic, "m", "mail:directmail:a@example.com", DlqPolicy=POLICY)
    push.subscribe(topic, "h", push_endpoint.url("/hook"))

    def unavailable(*args):
        raise RuntimeError("throttled")

    monkeypatch.setattr(push.services.dead_letters, "send", unavailable)
    _, outcomes = push.publish(topic)
    assert outcomes["h"].delivered and outcomes["m"].permanent
    (drop,) = push.log("drop")
    assert drop["subscription"] == "m" and "outcome" not in drop
    assert push.counters.drops == 1 and len(push_endpoint.hits) == 1


def test_an_exhausted_push_is_dead_lettered_though_its_message_just_left_its_retention(push, monkeypatch):
    """Slow attempts can make EXPONENTIAL_DECAY_RETRY end after the topic message's one day."""
    push.worker.stop()
    push.services.queues.create_queue(ACCOUNT, "dlq", None)
    topic = push.topic()
    push.subscribe(topic, "s", f"acs:mns:{REGION}:{ACCOUNT}:queues/missing", DlqPolicy=POLICY)
    task = exhausted_task(push, topic)
    published = int(task["delivery"]["publish_time"]) / 1000
    monkeypatch.setattr(push.services.clock, "now", lambda: published + 86_400 + 900)
    push.retries.handle_task(task)
    (received,) = dead_letters(push)
    assert system_properties(received)["DLQOriginMessageId"] == task["delivery"]["message_id"]
    # A retry (not the exhausted branch) of a message past its retention is still not attempted.
    assert push.retries.find(task["delivery"])[1] is None
