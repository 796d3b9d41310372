"""The topic message table's items: one per published message, written once, removed by TTL after a day.

`pk` the topic incarnation, `sk` the message id; a account, t topic name, p publish ms, g tag, b/z body (as in the
message table: text, or zlib-compressed UTF-8), ml DirectMail JSON, ms DirectSMS JSON, u user properties
([[name, value, type], ...]), l LoggingEnabled, me MetricsEnabled (where the topic set it), mg message group id,
x expiry (epoch seconds, TTL).
"""

from __future__ import annotations

from typing import Any

from pynamodb.attributes import BinaryAttribute, BooleanAttribute, ListAttribute, NumberAttribute, UnicodeAttribute

from mnsd.storage.dynamodb.items.wire import Expiry, KeyedItem


class TopicMessageItem(KeyedItem):
    a = UnicodeAttribute()
    t = UnicodeAttribute()
    p = NumberAttribute()
    x = Expiry()
    b = UnicodeAttribute(null=True)
    z = BinaryAttribute(null=True, legacy_encoding=False)
    g = UnicodeAttribute(null=True)
    ml = UnicodeAttribute(null=True)
    ms = UnicodeAttribute(null=True)
    u: ListAttribute[Any] = ListAttribute(null=True)  # of [name, value, type] lists of text
    l = BooleanAttribute(null=True)  # noqa: E741 (the name on the wire)
    me = BooleanAttribute(null=True)
    mg = UnicodeAttribute(null=True)
