"""The operation log of queue events: log records of change events, and the DynamoDB log table's writes."""

import pytest

from mnsd.entry.push import make_oplog_handler
from mnsd.log.changes import MessageChange, MessageEvent
from mnsd.log.oplog import LogRecord, QueueEventLog, queue_record
from mnsd.storage.dynamodb.tables.changes import message_changes
from mnsd.storage.dynamodb.tables.oplog import DynamoOperationLog, log_item, record_of
from tests.support.changes import event as change_of
from tests.support.changes import lease, record


def event(rec: dict) -> LogRecord:
    return queue_record(change_of(rec), "acct", "orders")


def test_a_change_is_logged_under_its_queue_with_its_change_id():
    sent = event(record("INSERT", new=lease(e="1700000000000", v="1700000005000", d="0", r="0")))
    assert (sent.account, sent.kind, sent.resource, sent.event, sent.event_id) == (
        "acct",
        "queue",
        "orders",
        "send",
        "ev1",
    )
    item = log_item(sent)
    assert item["pk"] == {"S": "acct#queue#orders"}
    assert item["sk"] == {"S": "1700000000000#ev1"}
    assert item["event"] == {"S": "send"} and item["delay"] == {"N": "5"}
    assert item["x"] == {"N": str(1700000000 + 7 * 86400)} and "subscription" not in item
    assert record_of(item) == sent


class Names:
    def __init__(self) -> None:
        self.asked: list[str] = []

    def queue_name(self, queue_id: str) -> tuple[str, str] | None:
        self.asked.append(queue_id)
        return ("acct", "orders") if queue_id == "qid" else None


class Written:
    def __init__(self) -> None:
        self.records: list[LogRecord] = []

    def write(self, records: list[LogRecord]) -> None:
        self.records += records


def test_the_queue_event_log_names_each_queue_once_and_skips_deleted_queues():
    names, written = Names(), Written()
    log = QueueEventLog(names, written)
    first = MessageChange("qid", "M1", MessageEvent.SEND, 5, "c1", 5, 0)
    gone = MessageChange("old", "M2", MessageEvent.DELETE, 6, "c2", 1, 1)
    assert log.handle([first, gone, first]) == 2
    assert names.asked == ["qid", "old"]
    assert [(r.resource, r.event, r.event_id) for r in written.records] == [("orders", "send", "c1")] * 2


class ThrottledTable:
    """A DynamoDB client that leaves the last item of each batch unprocessed on its first `throttled` calls."""

    def __init__(self, throttled: int) -> None:
        self.throttled = throttled
        self.calls = 0
        self.written: list[dict] = []

    def batch_write_item(self, RequestItems: dict) -> dict:  # noqa: N803 (boto3's name)
        self.calls += 1
        (requests,) = RequestItems.values()
        if self.calls <= self.throttled:
            self.written += requests[:-1]
            return {"UnprocessedItems": {"log": requests[-1:]}}
        self.written += requests
        return {"UnprocessedItems": {}}


def sends(count: int) -> list[LogRecord]:
    return [
        event(record("INSERT", new=lease(e=str(1700000000000 + i), v="1700000000000", d="0", r="0")))
        for i in range(count)
    ]


def test_records_dynamodb_never_takes_raise_so_the_stream_batch_is_retried(monkeypatch):
    monkeypatch.setattr("mnsd.storage.dynamodb.tables.oplog.time.sleep", lambda seconds: None)
    table = ThrottledTable(throttled=100)
    with pytest.raises(RuntimeError, match="1 operation-log records still unprocessed"):
        DynamoOperationLog(table, "log").write(sends(2))
    assert table.calls == 6  # every backoff step was tried first


def test_records_taken_on_a_later_try_are_all_written_once(monkeypatch):
    monkeypatch.setattr("mnsd.storage.dynamodb.tables.oplog.time.sleep", lambda seconds: None)
    table = ThrottledTable(throttled=1)
    records = sends(2)
    DynamoOperationLog(table, "log").write(records)
    assert table.calls == 2
    assert table.written == [{"PutRequest": {"Item": log_item(r)}} for r in records]


class LambdaContext:
    function_name = "mns-oplog"
    memory_limit_in_mb = 128
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:mns-oplog"
    aws_request_id = "oplog"


def test_the_oplog_function_hands_the_events_of_its_stream_records_to_the_queue_event_log():
    written = Written()
    log = QueueEventLog(Names(), written)
    services = type("Services", (), {"queue_events": lambda self: log})()
    handler = make_oplog_handler(message_changes, lambda: services)
    body = {"pk": {"S": "qid"}, "sk": {"S": "BMSG1"}, "b": {"S": "x"}}
    sent = record("INSERT", new=lease(e="1700000000000", v="1700000000000", d="0", r="0"))
    assert handler({"Records": [record("INSERT", new=body), sent]}, LambdaContext()) == {"batchItemFailures": []}
    assert [(r.resource, r.event, r.message_id) for r in written.records] == [("orders", "send", "MSG1")]
