"""Change events: what happened to a queue message, in the domain's words (a topic message's one event, its
publication, is `mnsd.model.topics.TopicMessagePublished`).

Each storage engine turns its own change feed into these (the DynamoDB engine its tables' stream records,
`mnsd.storage.dynamodb.tables.changes`; the SQLite engine its change table, `mnsd.storage.sqlite.messages`); the
operation log (`mnsd.log.oplog`) reads only these. An engine reports the changes of messages
whose queue logs them (`Message.logging`), one event per operation:

    send               a message stored (SendMessage, BatchSendMessage, a dead-letter or redrive target)
    receive            a receive claimed it (its dequeue count grew)
    change_visibility  its next visible time changed without a receive (ChangeMessageVisibility, a rewind)
    delete             a consumer deleted it (kept for rewind or not)
    dead_letter        a receive moved it to its queue's dead-letter queue (`mnsd.storage.moves`)
    redrive            a redrive moved it back to the queue it was dead-lettered from (`mnsd.storage.moves`)
    rewind             a rewind restored it after its delete (kept); one in flight that a rewind makes
                       visible is a `change_visibility`
    expire             its retention ended

A kept message that a rewind drops or lets expire makes no event: its delete was the event.

Who: `access_key_id` is the access key of the request that sent, received or re-timed it (`mnsd.ground.actor`), on
both engines; the other events carry none (the DynamoDB engine learns of a delete from its stream, which does not
say who deleted).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class MessageEvent(StrEnum):
    SEND = "send"
    RECEIVE = "receive"
    CHANGE_VISIBILITY = "change_visibility"
    DELETE = "delete"
    EXPIRE = "expire"
    DEAD_LETTER = "dead_letter"
    REDRIVE = "redrive"
    REWIND = "rewind"


@dataclass(frozen=True)
class MessageChange:
    """One event of a queue message, with the fields the operation log records of it.

    `time` (epoch ms): a send's is its enqueue time, a first receive's its first dequeue time, the others' when
    the engine made the change. `change_id` names the change in its engine's feed, the same each time the feed
    hands it over again (the log's records are idempotent on it).
    """

    queue_id: str  # the queue incarnation
    message_id: str
    event: MessageEvent
    time: int
    change_id: str
    enqueue_time: int
    dequeue_count: int
    first_dequeue_time: int | None = None  # receives; deletes and expiries of a message received at least once
    priority: int | None = None  # sends
    delay: int | None = None  # sends: seconds from enqueue until first receivable
    body_size: int | None = None  # sends: UTF-8 bytes
    access_key_id: str | None = None  # sends, receives, visibility changes: who made them
    next_visible_time: int | None = None  # receives, visibility changes: when it is receivable again (ms)
    target_queue_id: str | None = None  # moves: the queue incarnation it went to
    target_message_id: str | None = None  # moves: its id there
