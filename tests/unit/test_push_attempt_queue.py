"""The first-attempt queue (AWS): what the fan-out hands over, how, and how the first-attempt function takes it."""

from __future__ import annotations

import pytest

from mnsd.entry.push import make_first_attempt_handler
from mnsd.metrics import NoMetrics
from mnsd.model.messages import Property
from mnsd.model.topics import Subscription, SubscriptionAttributes, TopicMessage
from mnsd.push.attempt_queue import (
    MAX_BATCH_ENTRIES,
    MAX_REQUEST_BYTES,
    AttemptQueue,
    AttemptQueueRefused,
    QueuedFirstAttempt,
    decode,
    encode,
    group_id,
)
from mnsd.push.delivery import Outcome
from mnsd.push.fanout import Fanout
from mnsd.push.records import PushCounters
from mnsd.push.workflow import execution_name

ACCOUNT = "1000000000000001"
REGION = "cn-hangzhou"
MESSAGE = TopicMessage(
    ACCOUNT,
    "t",
    "tid",
    "MSGID-1",
    'a "quoted" \\ body\n重要 😀',
    "tag",
    1449556920975,
    direct_mail={"AccountName": "a@example.com", "Subject": "s"},
    direct_sms={"FreeSignName": "Shop", "Receiver": "+8613800000000"},
    user_properties=(Property("k", "v", "STRING"),),
    logging_enabled=True,
)


def subscription(name: str, endpoint: str = "http://h.example/") -> Subscription:
    attributes = SubscriptionAttributes(
        endpoint, "tag", "EXPONENTIAL_DECAY_RETRY", "JSON", dlq_enabled=True, dlq_target_queue="dlq"
    )
    return Subscription(ACCOUNT, "t", name, attributes, 1, 2, "tid")


class RecordingSqs:
    def __init__(self, failed: list[dict] | None = None) -> None:
        self.batches: list[list[dict]] = []
        self.deleted: list[str] = []
        self.failed = failed or []

    def send_message_batch(self, QueueUrl: str, Entries: list[dict]) -> dict:
        self.batches.append(Entries)
        return {"Successful": [{"Id": e["Id"]} for e in Entries], "Failed": self.failed}

    def delete_message(self, QueueUrl: str, ReceiptHandle: str) -> dict:
        self.deleted.append(ReceiptHandle)
        return {}


def test_an_attempt_travels_as_ascii_json_and_comes_back_equal():
    body = encode(subscription("s"), MESSAGE)
    assert body.isascii()
    assert decode(body) == (subscription("s"), MESSAGE)


def test_the_largest_body_a_topic_takes_fits_in_one_sqs_message():
    worst = TopicMessage(ACCOUNT, "t", "tid", "M", '"' * 65536, "", 1)  # every character escaped
    assert len(encode(subscription("s"), worst)) < MAX_REQUEST_BYTES


def test_each_subscription_is_a_group_and_each_delivery_is_deduplicated_ten_to_a_request():
    sqs = RecordingSqs()
    subscriptions = [subscription(f"s{i}") for i in range(12)]
    assert AttemptQueue(sqs, "url", REGION).send(MESSAGE, subscriptions) == []
    assert [len(batch) for batch in sqs.batches] == [MAX_BATCH_ENTRIES, 2]
    entries = [entry for batch in sqs.batches for entry in batch]
    assert [e["MessageGroupId"] for e in entries] == [group_id(s) for s in subscriptions]
    assert len({e["MessageGroupId"] for e in entries}) == 12
    assert all(len(e["MessageGroupId"]) <= 128 for e in entries)
    assert [e["MessageDeduplicationId"] for e in entries] == [execution_name(s, MESSAGE) for s in subscriptions]
    assert all(len({e["Id"] for e in batch}) == len(batch) for batch in sqs.batches)


def test_a_request_stays_within_sqs_size_limit_and_a_too_large_attempt_is_left_to_the_caller():
    sqs = RecordingSqs()
    large = TopicMessage(ACCOUNT, "t", "tid", "M", "x" * 60_000, "", 1)
    queue = AttemptQueue(sqs, "url", REGION)
    assert queue.send(large, [subscription(f"s{i}") for i in range(5)]) == []
    assert len(sqs.batches) == 2
    assert all(sum(len(e["MessageBody"]) for e in batch) <= MAX_REQUEST_BYTES for batch in sqs.batches)
    huge = TopicMessage(ACCOUNT, "t", "tid", "M", "😀" * 30_000, "", 1)  # 12 ASCII bytes a character
    assert queue.send(huge, [subscription("s")]) == [subscription("s")]


def test_a_refused_entry_fails_the_hand_over():
    sqs = RecordingSqs(failed=[{"Id": "0", "Code": "InternalError", "SenderFault": False}])
    with pytest.raises(AttemptQueueRefused):
        AttemptQueue(sqs, "url", REGION).send(MESSAGE, [subscription("s")])


class RecordingFirstAttempt:
    def __init__(self, fail: bool = False) -> None:
        self.attempts: list[tuple[str, str]] = []
        self.fail = fail

    def attempt(self, subscription: Subscription, message: TopicMessage) -> Outcome:
        if self.fail:
            raise RuntimeError("the retry workflow cannot be started")
        self.attempts.append((subscription.name, message.message_id))
        return Outcome(True)


class Subscriptions:
    def __init__(self, subscriptions: list[Subscription]) -> None:
        self.subscriptions = subscriptions

    def subscriptions_of(self, message: TopicMessage) -> list[Subscription]:
        return self.subscriptions


class NoRecords:
    def publish(self, message: TopicMessage) -> None:
        return None

    def write(self, message: TopicMessage, records: list) -> None:
        pass


def test_the_fanout_hands_over_external_endpoints_and_writes_to_queues_itself():
    subscriptions = [
        subscription("http"),
        subscription("mail", "mail:directmail:a@example.com"),
        subscription("sms", "sms:directsms:anonymous"),
        subscription("queue", f"acs:mns:{REGION}:{ACCOUNT}:queues/q"),
    ]
    sqs, first_attempt = RecordingSqs(), RecordingFirstAttempt()
    fanout = Fanout(Subscriptions(subscriptions), first_attempt, NoRecords(), AttemptQueue(sqs, "url", REGION))
    assert set(fanout.fan_out(MESSAGE)) == {"queue"}
    assert first_attempt.attempts == [("queue", MESSAGE.message_id)]
    assert [decode(e["MessageBody"])[0].name for e in sqs.batches[0]] == ["http", "mail", "sms"]


def test_a_refused_hand_over_fails_the_fanout_before_any_push():
    subscriptions = [subscription("http"), subscription("queue", f"acs:mns:{REGION}:{ACCOUNT}:queues/q")]
    sqs, first_attempt = RecordingSqs(failed=[{"Id": "0", "Code": "InternalError"}]), RecordingFirstAttempt()
    fanout = Fanout(Subscriptions(subscriptions), first_attempt, NoRecords(), AttemptQueue(sqs, "url", REGION))
    with pytest.raises(AttemptQueueRefused):
        fanout.fan_out(MESSAGE)
    assert first_attempt.attempts == []


def test_without_the_queue_the_fanout_makes_every_first_attempt():
    first_attempt = RecordingFirstAttempt()
    fanout = Fanout(Subscriptions([subscription("http")]), first_attempt, NoRecords())
    assert set(fanout.fan_out(MESSAGE)) == {"http"}
    assert first_attempt.attempts == [("http", MESSAGE.message_id)]


class LambdaContext:
    function_name = "mns-test"
    memory_limit_in_mb = 256
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:mns-test"
    aws_request_id = "test"


def first_attempt_handler(queued: QueuedFirstAttempt):
    push = type("Push", (), {"counters": PushCounters(), "queued_first_attempt": queued})()
    services = type("Services", (), {"push": lambda self: push, "metrics": NoMetrics()})
    return make_first_attempt_handler(lambda: services())


def sqs_record(name: str, group: str) -> dict:
    body = encode(subscription(name), MESSAGE)
    return {"messageId": name, "receiptHandle": f"rh-{name}", "body": body, "attributes": {"MessageGroupId": group}}


def test_a_batch_of_several_subscriptions_frees_each_group_as_soon_as_its_attempt_is_made(monkeypatch):
    monkeypatch.setenv("POWERTOOLS_METRICS_NAMESPACE", "MNS")
    sqs, first_attempt = RecordingSqs(), RecordingFirstAttempt()
    handler = first_attempt_handler(QueuedFirstAttempt(first_attempt, AttemptQueue(sqs, "url", REGION)))
    result = handler({"Records": [sqs_record("a", "ga"), sqs_record("b", "gb")]}, LambdaContext())
    assert result == {"batchItemFailures": []}
    assert sorted(first_attempt.attempts) == [("a", MESSAGE.message_id), ("b", MESSAGE.message_id)]
    assert sorted(sqs.deleted) == ["rh-a", "rh-b"]


def test_a_batch_of_one_subscription_is_left_for_lambda_to_delete(monkeypatch):
    monkeypatch.setenv("POWERTOOLS_METRICS_NAMESPACE", "MNS")
    sqs, first_attempt = RecordingSqs(), RecordingFirstAttempt()
    handler = first_attempt_handler(QueuedFirstAttempt(first_attempt, AttemptQueue(sqs, "url", REGION)))
    assert handler({"Records": [sqs_record("a", "ga")]}, LambdaContext()) == {"batchItemFailures": []}
    assert first_attempt.attempts == [("a", MESSAGE.message_id)] and sqs.deleted == []


def test_an_attempt_that_cannot_start_its_retries_is_reported_and_kept(monkeypatch):
    monkeypatch.setenv("POWERTOOLS_METRICS_NAMESPACE", "MNS")
    sqs = RecordingSqs()
    handler = first_attempt_handler(
        QueuedFirstAttempt(RecordingFirstAttempt(fail=True), AttemptQueue(sqs, "url", REGION))
    )
    result = handler({"Records": [sqs_record("a", "ga"), sqs_record("b", "gb")]}, LambdaContext())
    assert sorted(f["itemIdentifier"] for f in result["batchItemFailures"]) == ["a", "b"]
    assert sqs.deleted == []


def test_the_handler_refuses_to_run_without_the_queue(monkeypatch):
    monkeypatch.setenv("POWERTOOLS_METRICS_NAMESPACE", "MNS")
    push = type("Push", (), {"counters": PushCounters(), "queued_first_attempt": None})()
    handler = make_first_attempt_handler(lambda: type("Services", (), {"push": lambda self: push})())
    with pytest.raises(RuntimeError, match="MNS_FIRST_ATTEMPT_QUEUE_URL"):
        handler({"Records": [sqs_record("a", "ga")]}, LambdaContext())
