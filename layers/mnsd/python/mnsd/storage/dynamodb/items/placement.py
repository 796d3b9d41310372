"""The engine's placement of a queue incarnation's messages (`placement.Placement.record`), as its attributes: kept
in the queue's record of the meta table (`meta.QueueItem`), or in a receiver's incarnation's entry of the queue ids
(`meta.QueueIdItem`), beside the catalog's fields; read, cached and updated by the engine alone
(`placement.queue_records`), through the meta table's port, which writes them by their model."""

from __future__ import annotations

from pynamodb.attributes import NumberAttribute, UnicodeAttribute

from mnsd.storage.dynamodb.items.wire import KeyedItem


class PlacedItem(KeyedItem):
    """A meta table's item that holds a queue incarnation's placement (each attribute absent: its default)."""

    stripes = NumberAttribute(null=True)  # (absent on records written before queues had stripes: one)
    widened_at = NumberAttribute(null=True)
    index_since = NumberAttribute(null=True)
    plain_stripes = NumberAttribute(null=True)
    index_cursor = UnicodeAttribute(null=True)


# The placement's fields in a record (`Placement.record`), by their attribute names.
PLACEMENT_FIELDS = tuple(
    attribute.attr_name for name, attribute in PlacedItem.get_attributes().items() if name not in ("pk", "sk")
)
