"""The analytics jobs' read schemas (`glue_jobs/schemas.py`) name attributes of the engine's item models
(`mnsd.storage.dynamodb.items`), each with the model's DynamoDB type: a renamed or retyped attribute fails here, not in
a job reading nulls."""

from __future__ import annotations

import dataclasses

from glue_jobs import exports, schemas
from mnsd.monitoring import snapshot
from mnsd.monitoring.snapshot import BacklogRow
from mnsd.storage.dynamodb.items.groups import GroupPackItem
from mnsd.storage.dynamodb.items.leases import LeaseItem, PackItem
from mnsd.storage.dynamodb.items.log import LogItem
from mnsd.storage.dynamodb.items.meta import QueueItem
from mnsd.storage.dynamodb.items.wire import attributes


def _declared(model: type) -> dict[str, str]:
    return {name: attribute.attr_type for name, attribute in attributes(model).items()}


def test_the_log_schema_reads_the_log_items_attributes_with_their_types() -> None:
    declared = _declared(LogItem)
    assert {name: declared.get(name) for name in schemas.LOG_ATTRIBUTES} == schemas.LOG_ATTRIBUTES


def test_the_meta_schema_reads_the_queue_items_attributes_with_their_types() -> None:
    declared = _declared(QueueItem)
    assert {name: declared.get(name) for name in schemas.META_ATTRIBUTES} == schemas.META_ATTRIBUTES


def test_the_message_schema_reads_a_fifo_packs_attributes_with_their_types() -> None:
    """The backlog snapshot reads a FIFO group's packs as any pack: its place, enqueue time, expiry, size and each
    entry's attributes (`schemas.PACK_ENTRY_ATTRIBUTES`) are `GroupPackItem`'s, of the same types."""
    declared = _declared(GroupPackItem)
    entries = [f"{name}{n}" for n in range(schemas.PACK_ENTRIES) for name in schemas.PACK_ENTRY_ATTRIBUTES]
    read = ["pk", "sk", "v", "e", "x", "p", *entries]
    assert set(read) <= set(schemas.MESSAGE_ATTRIBUTES)
    assert {name: declared.get(name) for name in read} == {name: schemas.MESSAGE_ATTRIBUTES[name] for name in read}


def test_the_message_schema_reads_the_lease_and_pack_items_attributes_with_their_types() -> None:
    """A single lease's attributes (`LeaseItem`), a pack's size and its entries' (`PackItem`: `v{n}`, `d{n}`, ...)."""
    lease, pack = _declared(LeaseItem), _declared(PackItem)
    read = {name: lease.get(name, pack.get(name)) for name in schemas.MESSAGE_ATTRIBUTES}
    assert read == schemas.MESSAGE_ATTRIBUTES
    entries = {name for name in schemas.MESSAGE_ATTRIBUTES if name[1:].isdigit()}
    assert entries and {name: pack.get(name) for name in entries} == {n: schemas.MESSAGE_ATTRIBUTES[n] for n in entries}


def test_the_backlog_schema_reads_the_snapshot_rows_the_layer_writes() -> None:
    # Two deployables, one contract: the snapshot function's lines (`BacklogRow`) and the objects' names.
    fields = {f.name: f.dataType.simpleString() for f in schemas.BACKLOG_SCHEMA.fields}
    hints = {f.name: f.type for f in dataclasses.fields(BacklogRow)}
    assert list(fields) == list(hints)
    assert {name for name, kind in fields.items() if kind == "string"} == {n for n, t in hints.items() if t == "str"}
    assert exports.SNAPSHOT_SUFFIX == snapshot.SNAPSHOT_SUFFIX
