"""The analytics jobs' read schemas (`glue_jobs/schemas.py`) name attributes of the engine's item models
(`mnsd.storage.dynamodb.items`), each with the model's DynamoDB type: a renamed or retyped attribute fails here, not in
a job reading nulls."""

from __future__ import annotations

from glue_jobs import schemas
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
