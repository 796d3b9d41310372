"""Queue events from message-table stream records, as Lambda receives them."""

import pytest

from mnsd.oplog import LogRecord, queue_event
from mnsd.storage.dynamodb.oplog import DynamoOperationLog

LEASE = "L08" + "1700000000000" + "MSG1"


def lease(**attributes: str) -> dict:
    image = {"pk": {"S": "qid"}, "sk": {"S": LEASE}, "id": {"S": "MSG1"}, "l": {"BOOL": True}, "b": {"S": "héllo"}}
    image.update({name: {"N": value} for name, value in attributes.items()})
    return image


def record(name: str, new: dict | None = None, old: dict | None = None, **extra) -> dict:
    change = {"ApproximateCreationDateTime": 1700000042.0, "Keys": {}}
    if new is not None:
        change["NewImage"] = new
    if old is not None:
        change["OldImage"] = old
    return {"eventID": "ev1", "eventName": name, "dynamodb": change, **extra}


def event(rec: dict) -> LogRecord | None:
    return queue_event(rec, "acct", "orders")


def test_insert_is_a_send_stamped_with_its_enqueue_time():
    sent = event(record("INSERT", new=lease(e="1700000000000", v="1700000005000", d="0", r="0")))
    assert (sent.event, sent.time, sent.delay, sent.priority, sent.body_size) == ("send", 1700000000000, 5, 8, 6)
    assert sent.item()["pk"] == {"S": "acct#queue#orders"}
    assert sent.item()["sk"] == {"S": "1700000000000#ev1"}


def test_a_first_receive_is_stamped_with_its_first_dequeue_time():
    old = lease(e="1700000000000", v="1700000000000", d="0", r="0")
    new = lease(e="1700000000000", v="1700000031000", d="1", r="1", f="1700000001000")
    received = event(record("MODIFY", new=new, old=old))
    assert (received.event, received.time, received.dequeue_count) == ("receive", 1700000001000, 1)


def test_a_redelivery_is_stamped_with_the_stream_time():
    old = lease(e="1", v="2", d="1", r="1", f="1700000001000")
    new = lease(e="1", v="3", d="2", r="2", f="1700000001000")
    received = event(record("MODIFY", new=new, old=old))
    assert (received.event, received.time, received.dequeue_count) == ("receive", 1700000042000, 2)


def test_a_new_version_without_a_receive_is_a_visibility_change():
    old = lease(e="1", v="2", d="1", r="1", f="5")
    changed = event(record("MODIFY", new=lease(e="1", v="9", d="1", r="2", f="5"), old=old))
    assert changed.event == "change_visibility"


def test_removal_by_ttl_is_an_expiry_and_by_a_client_a_delete():
    old = lease(e="1", v="2", d="3", r="3", f="5")
    ttl = {"type": "Service", "principalId": "dynamodb.amazonaws.com"}
    assert event(record("REMOVE", old=old, userIdentity=ttl)).event == "expire"
    deleted = event(record("REMOVE", old=old))
    assert (deleted.event, deleted.dequeue_count, deleted.first_dequeue_time) == ("delete", 3, 5)


def test_body_items_are_not_events():
    body = {"pk": {"S": "qid"}, "sk": {"S": "BMSG1"}, "b": {"S": "x"}}
    assert event(record("INSERT", new=body)) is None


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
    monkeypatch.setattr("mnsd.storage.dynamodb.oplog.time.sleep", lambda seconds: None)
    table = ThrottledTable(throttled=100)
    with pytest.raises(RuntimeError, match="1 operation-log records still unprocessed"):
        DynamoOperationLog(table, "log").write(sends(2))
    assert table.calls == 6  # every backoff step was tried first


def test_records_taken_on_a_later_try_are_all_written_once(monkeypatch):
    monkeypatch.setattr("mnsd.storage.dynamodb.oplog.time.sleep", lambda seconds: None)
    table = ThrottledTable(throttled=1)
    records = sends(2)
    DynamoOperationLog(table, "log").write(records)
    assert table.calls == 2
    assert table.written == [{"PutRequest": {"Item": r.item()}} for r in records]
