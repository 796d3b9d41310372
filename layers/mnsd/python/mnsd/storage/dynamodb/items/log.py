"""The operation log table's items: one per `mnsd.log.oplog.LogRecord`, the layout docs/analytics.md describes.

`pk = {account}#{kind}#{resource}`, `sk = {time_ms:013}#{event_id}`, `x` the TTL (epoch seconds), then each field
of the record that has a value (numbers N, text S; no empty `message_id`: it keys the index `MESSAGE_INDEX`).
"""

from __future__ import annotations

from pynamodb.attributes import NumberAttribute, UnicodeAttribute

from mnsd.storage.dynamodb.items.wire import Expiry, KeyedItem

MESSAGE_INDEX = "message"  # the records of one message: partition `message_id`, sort `pk`, every attribute projected


class LogItem(KeyedItem):
    x = Expiry()
    account = UnicodeAttribute()
    kind = UnicodeAttribute()
    resource = UnicodeAttribute()
    event = UnicodeAttribute()
    time = NumberAttribute()
    message_id = UnicodeAttribute(null=True)
    enqueue_time = NumberAttribute(null=True)
    dequeue_count = NumberAttribute(null=True)
    first_dequeue_time = NumberAttribute(null=True)
    priority = NumberAttribute(null=True)
    delay = NumberAttribute(null=True)
    body_size = NumberAttribute(null=True)
    subscription = UnicodeAttribute(null=True)
    endpoint_kind = UnicodeAttribute(null=True)
    attempt = NumberAttribute(null=True)
    outcome = UnicodeAttribute(null=True)
    status = NumberAttribute(null=True)
    latency_ms = NumberAttribute(null=True)
    publish_time = NumberAttribute(null=True)
    access_key_id = UnicodeAttribute(null=True)
    next_visible_time = NumberAttribute(null=True)
    target_queue = UnicodeAttribute(null=True)
    target_message_id = UnicodeAttribute(null=True)
