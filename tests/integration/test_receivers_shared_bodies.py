"""A queue's receivers' copies share the original's body items on DynamoDB (`mnsd.storage.dynamodb.items.shared_bodies`):
a send to a queue with receivers writes its bodies once; every reader of a copy (receive, peek, dead-letter, redrive,
rewind) reads its body byte for byte with its properties, the original deleted or not, on every engine; a body item
that could not be written leaves no lease naming it."""

from __future__ import annotations

import base64
import os

import pytest

from local_runtime.moto_client import SerializedClient
from mnsd.ground import errors
from mnsd.model.inputs import MessageInput
from mnsd.model.messages import Property
from mnsd.model.queues import DlqPolicyInput, QueueAttributeChanges, QueueCounts
from mnsd.queues.receivers import ReceiverInput
from mnsd.storage.dynamodb.items import message_table
from mnsd.storage.dynamodb.items.layout import BODY, LEASE, SOURCE_ATTRIBUTE
from mnsd.storage.dynamodb.items.packs import SIZE, indexes_of, is_pack, member_id
from tests.integration.receiving import receive_all
from tests.integration.services import ACCOUNT, ENGINES, make_service, service_on
from tests.support.simulator.dynamodb import SimulatedDynamoDB
from tests.support.wrappers import Wrapping

# The shapes a send's bodies take on DynamoDB: a batch's bodies in one body item; a single message's out of line;
# a batch too large for one body item, a body item per message (`packs.BODY_LIMIT`).
SHAPES = {"batch": (16, 1024), "single": (1, 3000), "large batch": (16, 40_000)}


@pytest.fixture(params=ENGINES)
def service(request, clock):
    yield from service_on(request, clock)


def bodies(count: int, size: int) -> list[str]:
    """Incompressible bodies (random base64) with characters of two, three and four bytes in UTF-8 and line ends."""
    return [base64.b64encode(os.urandom(size)).decode()[: size - 12] + f"é€😀\r\n{n:03d}" for n in range(count)]


def inputs_of(texts: list[str]) -> list[MessageInput]:
    return [
        MessageInput(text, None, 1 + n % 16, (Property("n", str(n), "NUMBER"), Property("k", "v é", "STRING")))
        for n, text in enumerate(texts)
    ]


def seen(messages) -> list[tuple[str, tuple[Property, ...]]]:
    return sorted((m.body, m.user_properties) for m in messages)


def table_items(service) -> list[dict]:
    store = service.messages
    items: list[dict] = []
    start = None
    while True:
        page = store.client.scan(TableName=store.table, **({"ExclusiveStartKey": start} if start else {}))
        items += page["Items"]
        start = page.get("LastEvaluatedKey")
        if not start:
            return items


def dangling(items: list[dict]) -> list[dict]:
    """The leases and packs naming body items (`SOURCE_ATTRIBUTE`) the table does not hold: a batch's, or each of
    its messages' when it had one each, or a single message's."""
    keys = {(item["pk"]["S"], item["sk"]["S"]) for item in items}
    gone = []
    for item in items:
        if not item["sk"]["S"].startswith(LEASE) or SOURCE_ATTRIBUTE not in item:
            continue
        partition, id_ = item[SOURCE_ATTRIBUTE]["S"].split(" ", 1)
        named = [id_]
        if is_pack(item) and (partition, BODY + id_) not in keys:
            named = [member_id(id_, n, int(item[SIZE]["N"])) for n in indexes_of(item)]
        if any((partition, BODY + one) not in keys for one in named):
            gone.append(item)
    return gone


def with_receivers(service, **queue: str) -> None:
    service.create_queue(ACCOUNT, "dead")
    service.create_queue(ACCOUNT, "q", QueueAttributeChanges(**queue))
    service.receivers.create(ACCOUNT, "q", "a", ReceiverInput())
    service.receivers.create(ACCOUNT, "q", "b", ReceiverInput())


@pytest.mark.parametrize("shape", SHAPES)
def test_a_send_to_a_queue_with_receivers_writes_its_bodies_once(shape, clock):
    count, size = SHAPES[shape]
    service = make_service(SerializedClient(SimulatedDynamoDB()), clock)
    with_receivers(service)
    assert all(r.error is None for r in service.send(ACCOUNT, "q", inputs_of(bodies(count, size))))
    items = table_items(service)
    body_items = [item for item in items if item["sk"]["S"].startswith(BODY)]
    # as many as the queue alone would have (three times as many when each receiver's copies wrote their own)
    assert len(body_items) == {"batch": 1, "single": 1, "large batch": 16}[shape]
    queue_ids = {service.get_queue(ACCOUNT, name).queue_id for name in ("q", "q.a", "q.b")}
    queue = service.get_queue(ACCOUNT, "q").queue_id
    assert {item["pk"]["S"].split("#")[0] for item in body_items} == {queue}
    copies = [i for i in items if i["sk"]["S"].startswith(LEASE) and i["pk"]["S"].split("#")[0] != queue]
    assert copies and all(SOURCE_ATTRIBUTE in i for i in copies) and dangling(items) == []
    assert {i["pk"]["S"].split("#")[0] for i in copies} == queue_ids - {queue}


@pytest.mark.parametrize("shape", SHAPES)
def test_every_reader_of_a_copy_reads_its_body_and_properties_the_original_deleted(service, clock, shape):
    count, size = SHAPES[shape]
    with_receivers(service, visibility_timeout="5")
    service.set_queue_attributes(ACCOUNT, "q.a", QueueAttributeChanges(dlq_policy=DlqPolicyInput("True", "dead", "1")))
    start = int(clock.now())
    sent = inputs_of(bodies(count, size))
    assert all(r.error is None for r in service.send(ACCOUNT, "q", sent))
    expected = seen(sent)
    assert seen(service.peek(ACCOUNT, "q.a", 16)) == expected  # peek

    # the originals received and deleted (rewind off: their leases are gone)
    got = receive_all(service, "q")
    assert seen(r.message for r in got) == expected
    assert service.batch_delete(ACCOUNT, "q", [r.receipt_handle for r in got]) == []
    assert service.queue_counts(service.get_queue(ACCOUNT, "q")) == QueueCounts(0, 0, 0)
    service.set_queue_attributes(ACCOUNT, "q", QueueAttributeChanges(rewind_period="600"))

    # receive, delete (kept: rewind is on), rewind, receive again
    got = receive_all(service, "q.b")
    assert seen(r.message for r in got) == expected
    assert service.batch_delete(ACCOUNT, "q.b", [r.receipt_handle for r in got]) == []
    assert service.rewind(ACCOUNT, "q.b", str(start)) == count
    assert seen(r.message for r in receive_all(service, "q.b")) == expected

    # dead-lettered at its second receive, then redriven back to the receiver
    assert seen(r.message for r in receive_all(service, "q.a")) == expected
    clock.advance(6)
    with pytest.raises(errors.MessageNotExist):
        service.receive(ACCOUNT, "q.a", 16, 0)
    assert seen(service.peek(ACCOUNT, "dead", 16)) == expected
    assert service.redrive(ACCOUNT, "dead") == count
    assert seen(r.message for r in receive_all(service, "q.a")) == expected


class BodiesUnprocessed(Wrapping):
    """A DynamoDB client whose BatchWriteItem leaves every body item unprocessed (as DynamoDB may leave any item)."""

    def batch_write_item(self, RequestItems):  # noqa: N803 (boto3's name)
        ((table, requests),) = RequestItems.items()
        bodies = [r for r in requests if r["PutRequest"]["Item"]["sk"]["S"].startswith(BODY)]
        others = [r for r in requests if r not in bodies]
        if others:
            self.inner.batch_write_item(RequestItems={table: others})
        return {"UnprocessedItems": {table: bodies} if bodies else {}}


@pytest.mark.parametrize("receivers", [True, False], ids=["receivers", "alone"])
@pytest.mark.parametrize("shape", SHAPES)
def test_a_body_item_not_written_leaves_no_lease_naming_it(shape, receivers, clock, monkeypatch):
    """A copy's lease or pack, and a queue's own (a batch's body item is in its stripe's body partition, a large
    single message's beside its lease: BatchWriteItem may write the one and not the other)."""
    monkeypatch.setattr(message_table.time, "sleep", lambda seconds: None)
    count, size = SHAPES[shape]
    client = SerializedClient(SimulatedDynamoDB())
    service = make_service(client, clock)
    names = ("q", "q.a", "q.b") if receivers else ("q",)
    if receivers:
        with_receivers(service)
    else:
        service.create_queue(ACCOUNT, "q")
    store = service.messages
    store.client = BodiesUnprocessed(client)
    answers = service.send(ACCOUNT, "q", inputs_of(bodies(count, size)))
    assert all(r.error is not None for r in answers)  # the sender is told to send them again
    assert [item for item in table_items(service) if item["sk"]["S"].startswith(LEASE)] == []
    for name in names:
        assert service.queue_counts(service.get_queue(ACCOUNT, name)) == QueueCounts(0, 0, 0)
    store.client = client
    sent = inputs_of(bodies(count, size))
    assert all(r.error is None for r in service.send(ACCOUNT, "q", sent))
    assert dangling(table_items(service)) == []
    for name in names:
        assert seen(r.message for r in receive_all(service, name)) == seen(sent)


def test_a_fifo_runs_body_item_not_written_leaves_no_pack(clock, monkeypatch):
    """A FIFO queue's batch (a pack per group's run, its body item beside it): the body item left unwritten, the
    pack is not written either; sent again, the run is read back whole and in order."""
    monkeypatch.setattr(message_table.time, "sleep", lambda seconds: None)
    client = SerializedClient(SimulatedDynamoDB())
    service = make_service(client, clock)
    service.create_queue(ACCOUNT, "q", QueueAttributeChanges(queue_type="fifo"))
    texts = bodies(16, 1024)
    inputs = [MessageInput(t, None, 8, message_group_id="g") for t in texts]
    store = service.services.storage.fifo_messages
    store.client = BodiesUnprocessed(client)
    assert all(r.error is not None for r in service.send(ACCOUNT, "q", inputs))
    assert [item for item in table_items(service) if item["sk"]["S"].startswith(LEASE)] == []
    store.client = client
    assert all(r.error is None for r in service.send(ACCOUNT, "q", inputs))
    assert [r.message.body for r in service.receive(ACCOUNT, "q", 16, 0)] == texts
