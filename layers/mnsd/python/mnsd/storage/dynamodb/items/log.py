"""The operation log table's items: one per `mnsd.log.oplog.LogRecord`, the layout docs/analytics.md describes.

`pk = {account}#{kind}#{resource}`, `sk = {time_ms:013}#{event_id}`, `x` the TTL (epoch seconds), then each field
of the record that has a value (numbers N, text S; no empty `message_id`: it keys the index `MESSAGE_INDEX`).
"""

from __future__ import annotations

from pynamodb.attributes import UnicodeAttribute

from mnsd.log.oplog import LogRecord
from mnsd.storage.dynamodb.items.wire import Expiry, KeyedItem, fields_of, model

MESSAGE_INDEX = "message"  # the records of one message: partition `message_id`, sort `pk`, every attribute projected


LogItem = model(
    "LogItem",
    KeyedItem,
    "A `LogRecord`: its fields (the event id in `sk`), `x` its expiry.",
    x=Expiry(),
    message_id=UnicodeAttribute(null=True),  # (left out when "": an index key is never empty)
    **fields_of(LogRecord, leave=("event_id", "message_id")),
)
