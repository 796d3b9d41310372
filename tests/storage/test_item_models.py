"""The engine's items are their PynamoDB models' (`mnsd.storage.dynamodb.items`): items written before the models read
and write back unchanged, and every item the engine writes through the control plane, the nonces, the counters, the
log, the topics, a FIFO queue's traffic (group items, homes, group packs, the placement in queue records) and the
standard queues' messages (leases, bodies, packs, batch bodies, the ready index's entries) is what its model
declares."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from mnsd.control.catalog import AccountAttributes, Catalog
from mnsd.ground.settings import Settings
from mnsd.log.oplog import LogRecord
from mnsd.model.messages import Property
from mnsd.model.queues import Queue, QueueAttributes, Receiver
from mnsd.model.topics import Subscription, SubscriptionAttributes, Topic, TopicAttributes, TopicMessage
from mnsd.storage import Storage
from mnsd.storage.dynamodb.items import check, groups, leases
from mnsd.storage.dynamodb.items.groups import GroupItem, GroupPackItem, HomeItem
from mnsd.storage.dynamodb.items.layout import LEASE_ATTRIBUTES, STRIPE_SEPARATOR
from mnsd.storage.dynamodb.items.leases import READY_INDEX, IndexEntry, LeaseItem, PackItem, kind_of
from mnsd.storage.dynamodb.items.log import LogItem
from mnsd.storage.dynamodb.items.meta import QueueItem, model_of
from mnsd.storage.dynamodb.items.placement import PLACEMENT_FIELDS
from mnsd.storage.dynamodb.items.topic import TopicMessageItem
from mnsd.storage.dynamodb.items.wire import record_of
from mnsd.storage.dynamodb.tables import meta, oplog, topic_messages
from tests.storage.engines import engine
from tests.support.fifo_traffic import fifo_traffic
from tests.support.message_items import write_every_standard_kind, write_fifo_kinds

# Items the engine wrote on moto before its items were models (every kind of the three tables, and ("message") of the
# message table's for standard queues, `message_items`; bytes in base64); and ("fifo", "placement") each shape of a
# FIFO queue's own items and of a placed queue record that `fifo_traffic` made the engine write on moto before those
# were models (a scan after each step, one item of each set of attributes).
BEFORE = Path(__file__).with_name("data") / "items_written_before.json"


def _bytes(value: dict[str, Any]) -> Any:
    return base64.b64decode(value["__bytes__"]) if set(value) == {"__bytes__"} else value


def _wire(item: dict[str, Any]) -> str:
    """An item as bytes on the wire would order it (DynamoDB JSON, keys sorted, binary in base64)."""
    return json.dumps(item, sort_keys=True, default=lambda b: base64.b64encode(b).decode())


@pytest.fixture
def moto_storage(request, tmp_path):
    yield from engine(request, tmp_path)


def _before() -> dict[str, list[dict[str, Any]]]:
    return json.loads(BEFORE.read_text(), object_hook=_bytes)


def test_items_written_before_the_models_read_into_them_and_write_back_byte_identical() -> None:
    items = _before()
    assert {len(items["meta"]), len(items["log"]), len(items["topic"])} and all(items.values())
    for item in items["meta"]:
        scope, name = item["pk"]["S"], item["sk"]["S"]
        record = record_of(model_of(scope), item, leave=("pk", "sk"))
        assert _wire(meta.meta_item(scope, name, record)) == _wire(item), scope
    for item in items["log"]:
        assert _wire(oplog.log_item(oplog.record_of(item))) == _wire(item)
    for item in items["topic"]:
        assert _wire(topic_messages.to_item(topic_messages.from_item(item))) == _wire(item)
    for item in items["message"]:
        model = kind_of(item)
        assert _wire(leases.item_of(model, **record_of(model, item))) == _wire(item), item["sk"]["S"]


def test_items_written_before_the_models_are_their_models_items() -> None:
    items = _before()
    assert [check.meta_problems(item) for item in items["meta"]] == [[]] * len(items["meta"])
    assert [check.problems(LogItem, item) for item in items["log"]] == [[]] * len(items["log"])
    assert [check.problems(TopicMessageItem, item) for item in items["topic"]] == [[]] * len(items["topic"])
    assert [leases.problems(item) for item in items["message"]] == [[]] * len(items["message"])
    assert {kind_of(item).__name__ for item in items["message"]} == _STANDARD_KINDS


def _rewritten(item: dict[str, Any]) -> dict[str, Any]:
    """A FIFO queue's own item read into its model and written back."""
    kind = groups.model_of(item)
    if kind is GroupItem:
        return groups.group_item(groups.group_of(item), groups.hold_of(item))
    assert kind in (HomeItem, GroupPackItem), item["sk"]
    return kind.from_raw_data(item).serialize(null_check=False)


def test_fifo_and_placement_items_written_before_the_models_read_into_them_and_write_back_byte_identical() -> None:
    items = _before()
    assert {groups.model_of(item) for item in items["fifo"]} == {GroupItem, HomeItem, GroupPackItem}
    assert any(groups.HOLD in name for item in items["fifo"] for name in item)  # (a group item holding a run)
    for item in items["fifo"]:
        assert _wire(_rewritten(item)) == _wire(item), item["sk"]
    assert any(set(PLACEMENT_FIELDS) <= set(item) for item in items["placement"])
    for item in items["placement"]:
        scope, name = item["pk"]["S"], item["sk"]["S"]
        record = record_of(model_of(scope), item, leave=("pk", "sk"))
        assert _wire(meta.meta_item(scope, name, record)) == _wire(item), scope
    assert [groups.fifo_problems(item) for item in items["fifo"]] == [[]] * len(items["fifo"])
    assert [check.meta_problems(item) for item in items["placement"]] == [[]] * len(items["placement"])


def _write_every_kind(storage: Storage) -> None:
    """Every item kind of the three tables, written through the engine as the services write them."""
    catalog = Catalog(storage.meta)
    attributes = QueueAttributes(logging_enabled=True, metrics_enabled=None, rewind_period=60, tags='{"k":"v"}')
    catalog.create_queue(Queue("1001", "orders", "q-1", attributes, 1700000000, 1700000000))
    queue = catalog.get_queue("1001", "orders")
    assert queue is not None
    receivers = (Receiver("r1", "q-1r", 1700000000000, 1700000000, 1700000000, visibility_timeout=40, dlq_target=""),)
    assert catalog.set_receivers(queue, receivers)
    catalog.add_receiver_id("1001", "orders/r1", "q-1r")
    catalog.create_topic(Topic("1001", "news", "t-1", TopicAttributes(metrics_enabled=True), 1700000000, 1700000000))
    subscription = SubscriptionAttributes("http://127.0.0.1/push", filter_tag="tag", dlq_enabled=True)
    catalog.create_subscription(Subscription("1001", "news", "s1", subscription, 1700000000000, 1700000000, "t-1"))
    catalog.set_account_attributes("1001", AccountAttributes(logging_bucket="bucket", endpoint_enabled=False))
    assert storage.nonces.first_use("AK:nonce-1", 1700000300)
    assert storage.rates.take("receive#q-1", 1700000000, 2) and storage.rates.take("receive#q-1", 1700000000, 2)
    storage.log.write(
        [
            LogRecord("1001", "queue", "orders", "send", 1700000000123, "M1", "e1", enqueue_time=1, priority=8),
            LogRecord("1001", "topic", "news", "drop", 1700000000200, "M2", "e2", subscription="s1", publish_time=1),
            LogRecord("1001", "queue", "orders", "expire", 1700000000300, "", "e3", dequeue_count=0),
        ]
    )
    properties = (Property("k", "v", "STRING"),)
    storage.topic_messages.put(
        TopicMessage("1001", "news", "t-1", "TM1", "hi", "tag", 1700000000000, {"Subject": "s"}, None, properties, True)
    )
    storage.topic_messages.put(TopicMessage("1001", "news", "t-1", "TM2", "x" * 300, "", 1700000000001))


def _scan(client: Any, table: str, **index: Any) -> list[dict[str, Any]]:
    items, start = [], None
    while True:
        page = client.scan(TableName=table, **index, **({"ExclusiveStartKey": start} if start else {}))
        items += page["Items"]
        start = page.get("LastEvaluatedKey")
        if not start:
            return items


@pytest.mark.parametrize("moto_storage", ["dynamodb-moto"], indirect=True)
def test_every_item_the_engine_writes_in_the_meta_log_and_topic_tables_is_its_models(moto_storage: Storage) -> None:
    _write_every_kind(moto_storage)
    client, settings = moto_storage.log.client, Settings()  # type: ignore[attr-defined]

    meta_items = _scan(client, settings.meta_table)
    assert {model_of(item["pk"]["S"]).__name__ for item in meta_items} == {
        "QueueItem", "QueueIdItem", "TopicItem", "SubscriptionItem", "AccountItem", "SubscriberItem", "NonceItem",
        "RateItem",
    }  # fmt: skip
    assert {
        name: problems for item in meta_items if (problems := check.meta_problems(item)) for name in [item["sk"]["S"]]
    } == {}
    log_items = _scan(client, settings.log_table)
    assert len(log_items) == 3 and [check.problems(LogItem, item) for item in log_items] == [[]] * 3
    topic_items = _scan(client, settings.topic_message_table)
    assert {"b", "z"} <= {name for item in topic_items for name in item}  # (a body stored as text, one compressed)
    assert [check.problems(TopicMessageItem, item) for item in topic_items] == [[]] * 2


@pytest.mark.parametrize("moto_storage", ["dynamodb-moto-packed"], indirect=True)
def test_every_fifo_queue_item_the_engine_writes_in_fifo_traffic_is_its_models(moto_storage: Storage) -> None:
    client, settings = moto_storage.log.client, Settings()  # type: ignore[attr-defined]
    kinds: set[Any] = set()
    found: dict[str, list[str]] = {}
    placed: list[dict[str, Any]] = []

    def snapshot() -> None:
        for item in _scan(client, settings.message_table):
            kind = groups.model_of(item)
            if kind is None:
                assert "#D" not in item["pk"]["S"], item  # (a directory partition holds group items only)
                continue
            kinds.add(kind)
            if problems := groups.fifo_problems(item):
                found[f"{item['pk']['S']} {item['sk']['S']}"] = problems
        placed.extend(item for item in _scan(client, settings.meta_table) if item["sk"]["S"] == "fifo")

    fifo_traffic(moto_storage, snapshot)
    assert kinds == {GroupItem, HomeItem, GroupPackItem} and found == {}
    assert any(set(PLACEMENT_FIELDS) <= set(item) for item in placed)  # (its placement grown, its index started)
    assert [check.meta_problems(item) for item in placed] == [[]] * len(placed)


def test_the_fifo_check_refuses_a_stray_attribute_a_hold_not_a_number_and_a_stray_entry_attribute() -> None:
    items = _before()["fifo"]
    (group,) = [item for item in items if groups.model_of(item) is GroupItem and "k" in item][:1]
    (pack,) = [item for item in items if groups.model_of(item) is GroupPackItem and "p" in item][:1]
    assert groups.fifo_problems({**group, "colour": {"S": "red"}}) == ["GroupItem.colour: no such attribute"]
    assert groups.fifo_problems({**group, "t_1": {"S": "1"}}) == ["GroupItem.t_1: not a number"]
    assert groups.fifo_problems({**group, "n": {"S": "1"}}) == ["GroupItem.n: S where the model has N"]
    assert groups.fifo_problems({**pack, "v16": {"N": "1"}}) == ["GroupPackItem.v16: no such attribute"]
    assert groups.fifo_problems({**pack, "k0": {"N": "1"}}) == ["GroupPackItem.k0: N where the model has BOOL"]


def test_the_check_refuses_an_unknown_attribute_a_wrong_type_a_missing_one_and_a_stray_receiver_field() -> None:
    (queue,) = [item for item in _before()["meta"] if item["pk"]["S"] == "1001#queue" and "receivers" in item]
    assert check.problems(QueueItem, queue) == []
    assert check.problems(QueueItem, {**queue, "colour": {"S": "red"}}) == ["QueueItem.colour: no such attribute"]
    assert check.problems(QueueItem, {**queue, "stripes": {"S": "1"}}) == ["QueueItem.stripes: S where the model has N"]
    missing = {name: value for name, value in queue.items() if name != "queue_id"}
    assert check.problems(QueueItem, missing) == ["QueueItem.queue_id: missing"]
    receiver = {"M": {**queue["receivers"]["L"][0]["M"], "colour": {"S": "red"}}}
    assert check.problems(QueueItem, {**queue, "receivers": {"L": [receiver]}}) == [
        "receivers[0].colour: no such attribute"
    ]


def test_a_record_field_no_model_declares_is_refused_before_it_is_written() -> None:
    with pytest.raises(ValueError, match="colour"):
        meta.meta_item("1001#queue", "orders", {"queue_id": "q", "colour": "red"})


_STANDARD_KINDS = {"LeaseItem", "PackItem", "BodyItem", "BatchBodyItem"}


def _problems(item: dict[str, Any]) -> tuple[str, list[str]]:
    """An item of the message table's model, and what in it that model does not declare: a FIFO queue's own items'
    (group items, homes, group packs: `groups.model_of`), else a lease's, a body's, a pack's (`leases.kind_of`: the
    leases and bodies of a FIFO queue's groups are those of any message)."""
    fifo = groups.model_of(item)
    if fifo is not None:
        return fifo.__name__, groups.fifo_problems(item)
    return kind_of(item).__name__, leases.problems(item)


@pytest.mark.parametrize("moto_storage", ["dynamodb-moto-packed"], indirect=True)
def test_every_item_the_engine_writes_in_the_message_table_is_its_models(moto_storage: Storage) -> None:
    client, table = moto_storage.messages.client, Settings().message_table  # type: ignore[attr-defined]
    write_every_standard_kind(client)
    write_fifo_kinds(moto_storage)

    checked = {(item["pk"]["S"], item["sk"]["S"]): _problems(item) for item in _scan(client, table)}
    assert {model for model, _ in checked.values()} == _STANDARD_KINDS | {"GroupItem", "HomeItem"}
    assert any(STRIPE_SEPARATOR + "G" in partition for partition, _ in checked)  # (a FIFO queue's groups' items)
    assert {key: found for key, (_, found) in checked.items() if found} == {}
    entries = _scan(client, table, IndexName=READY_INDEX)
    assert {"r", "d"} <= {name for entry in entries for name in entry}  # (a lease's entry, and a pack's)
    assert [check.problems(IndexEntry, entry) for entry in entries] == [[]] * len(entries)


def test_the_check_refuses_a_message_item_with_an_unknown_attribute_a_wrong_type_or_a_missing_one() -> None:
    (pack, *_) = [item for item in _before()["message"] if kind_of(item) is PackItem and "v1" in item]
    assert leases.problems(pack) == []
    assert leases.problems({**pack, "v16": {"N": "1"}}) == ["PackItem.v16: no such attribute"]
    assert leases.problems({**pack, "k1": {"S": "1"}}) == ["PackItem.k1: S where the model has BOOL"]
    missing = {name: value for name, value in pack.items() if name != "p"}
    assert leases.problems(missing) == ["PackItem.p: missing"]
    lease = next(item for item in _before()["message"] if "u" in item and item["sk"]["S"].startswith("L"))
    assert leases.problems({**lease, "u": {"L": [{"L": [{"S": "k"}]}]}}) == [
        "LeaseItem.u: not [name, value, type] lists of text"
    ]


def test_the_lease_attributes_the_layout_documents_are_the_lease_models() -> None:
    declared = {attribute.attr_name: attribute.attr_type for attribute in leases.declared(LeaseItem).values()}
    assert {name: kind for name, (kind, _) in LEASE_ATTRIBUTES.items()} == declared
