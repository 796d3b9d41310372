"""The storage boundary: what the domain services need from a database, as typed interfaces.

Two engines implement it: `mnsd.storage.dynamodb` (AWS, and moto in tests and `MNS_ENGINE=moto`)
and `mnsd.storage.sqlite` (the local runtime's embedded engine). Only an engine's own modules speak
its database (boto3 DynamoDB calls, SQL); the services see entities (`Message`, `Queue`, ...).

Semantics every engine keeps (the contract suite, tests/storage, runs them against each engine):
- a claim is atomic on the lease as observed (its version, and it being Active): of any number of
  concurrent claims of one message, exactly one succeeds;
- delete and change-visibility succeed only for the lease version a receipt handle names, while
  that lease is still hidden (not yet visible again);
- ready messages come in queue order: priority, then the time they first became receivable (DynamoDB:
  among the page a receive reads, its ready index being ordered by visibility time: best effort);
- expired messages (retention over) are never returned nor counted, whether or not yet removed;
- a queue or topic incarnation (`queue_id`, `topic_id`) never sees another's messages;
- a move (dead-lettering, redrive) removes the source lease, conditioned on it as observed and Active,
  and stores the target message in one atomic step: a message is never in both, nor in neither;
- a message deleted with `delete_keeping` (rewind on) is kept, never returned nor counted, until
  `rewind` makes it receivable again, `drop_kept` forgets it or its retention ends.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from mnsd.queue_model import PLAIN, Message, MessageRef, QueueCounts, Spread
from mnsd.storage.rates import ProcessRateCounter
from mnsd.stripes import Pressure
from mnsd.topic_model import TopicMessage

if TYPE_CHECKING:
    from mnsd.metrics import LogRead
    from mnsd.oplog import LogRecord

Record = dict[str, Any]  # a control-plane record: JSON-like values (str, int, bool, lists, maps)


@dataclass(frozen=True)
class ReadyScan:
    """Active messages found in queue order, and when the next inactive or delayed one becomes receivable."""

    messages: list[Message]
    next_visible_at: int | None
    wasted: int = 0  # leases read that could not be claimed (in flight, delayed, expired)


class MessageStore(Protocol):
    def put(self, messages: list[Message]) -> set[str]:
        """Store new messages; the ids of those that could not be stored."""
        ...

    def claim(self, message: Message, now_ms: int, visible_at: int) -> Message | None:
        """`message.received(now_ms, visible_at)` if the lease is still as observed and Active, else None."""
        ...

    def claim_some(self, candidates: list[Message], count: int, now_ms: int, visible_at: int) -> list[Message]:
        """Claim candidates in their order until `count` are owned (as `claim` each); the claimed ones. (An engine
        may skip the rest of a partition's candidates once a claim there was lost to another consumer.)"""
        ...

    def delete(self, ref: MessageRef, version: int, now_ms: int) -> bool:
        """Delete a message whose lease is still the one a receipt handle (`version`) names."""
        ...

    def delete_many(self, leases: list[tuple[MessageRef, int]], now_ms: int) -> list[bool]:
        """`delete` for each (ref, version); whether each was deleted."""
        ...

    def change_visibility(
        self, ref: MessageRef, version: int, now_ms: int, visible_at: int, indexing: bool = False
    ) -> bool:
        """Re-time a message whose lease is still the one a receipt handle names (`Message.retimed`); `indexing`:
        its queue's writes keep the ready index (`Spread`)."""
        ...

    def scan_ready(self, queue_id: str, now_ms: int, wanted: int, spread: Spread = PLAIN, enough: int = 0) -> ReadyScan:
        """Up to `wanted` Active, unexpired messages in queue order (bodies may be left unloaded) from the
        queue's stripes (`Spread`; an engine without partitions ignores it and `enough`): it reads further
        stripes only while it has fewer than `enough` (default `wanted`)."""
        ...

    def load_bodies(self, messages: list[Message]) -> None:
        """Fill in the bodies (and what else) `scan_ready` or `claim` left out."""
        ...

    def counts(self, queue_id: str, now_ms: int, spread: Spread = PLAIN) -> QueueCounts:
        """Active, Inactive and Delayed messages (approximate beyond a bounded sample where the engine says)."""
        ...

    # --- dead letters and rewind ------------------------------------------------------------

    def move(self, source: Message, now_ms: int, target: Message) -> bool:
        """Atomically remove `source` (if its lease is still as observed and Active) and store `target`."""
        ...

    def delete_keeping(self, leases: list[tuple[MessageRef, int]], now_ms: int) -> list[bool]:
        """`delete_many`, but each deleted message is kept (invisible, uncounted) for `rewind`."""
        ...

    def rewind(self, queue_id: str, since_ms: int, now_ms: int, spread: Spread = PLAIN) -> int:
        """Make the kept and in-flight messages enqueued at or after `since_ms` receivable now, in all of the
        queue's stripes; how many."""
        ...

    def drop_kept(self, queue_id: str, now_ms: int, spread: Spread = PLAIN) -> int:
        """Forget the messages kept for rewind, in all of the queue's stripes; how many."""
        ...

    def build_index(self, queue_id: str, spread: Spread, cursor: str, now_ms: int, budget: int) -> str | None:
        """One step of building the ready index over a queue's leases once its writes keep it (`Spread.indexing`,
        long enough ago that no container writes without it): up to `budget` leases from `cursor` ("" at the
        start) on. Where to go on from; None when every stripe is done and the index answers reads."""
        ...


class MetaTable(Protocol):
    """Control-plane records by (partition, name); `mnsd.storage.catalog` gives them their meaning."""

    def create(self, partition: str, name: str, record: Record) -> Record | None:
        """Store a new record; if the name is taken, return the record that holds it instead."""
        ...

    def get(self, partition: str, name: str) -> Record | None: ...

    def update(self, partition: str, name: str, changes: Record, expected: Record | None = None) -> bool:
        """Apply changes to an existing record; False if there is none, or if it does not hold the `expected`
        values (None: the attribute must be absent)."""
        ...

    def put(self, partition: str, name: str, record: Record) -> None: ...

    def delete(self, partition: str, name: str) -> Record | None:
        """Delete a record; the deleted record, or None if there was none."""
        ...

    def count(self, partition: str) -> int: ...

    def list(
        self, partition: str, prefix: str, limit: int, start_after: str | None
    ) -> tuple[list[tuple[str, Record]], bool]:
        """Up to `limit` (name, record) pairs in name order, and whether more follow."""
        ...


class TopicMessageStore(Protocol):
    def put(self, message: TopicMessage) -> None: ...

    def get(self, topic_id: str, message_id: str, now_ms: int) -> TopicMessage | None:
        """A message still in its retention period, or None."""
        ...

    def count(self, topic_id: str, now_ms: int) -> int:
        """Messages published in the retention period."""
        ...


class OperationLogStore(Protocol):
    def write(self, records: list[LogRecord]) -> None:
        """Write every record or raise (records are idempotent: the same event may be written twice)."""
        ...

    def read(
        self, account: str, kind: str, resource: str, start_ms: int, end_ms: int, limit: int, subscription: str = ""
    ) -> LogRead:
        """The records of `{account}#{kind}#{resource}` with start_ms <= time <= end_ms (of one subscription if
        given), oldest first, reading at most `limit` items (`truncated` when more were left unread)."""
        ...


class RateCounter(Protocol):
    def take(self, key: str, second: int, limit: int) -> bool:
        """Count one request of `key` in epoch second `second`; False (and not counted) once `limit` are counted."""
        ...


@dataclass(frozen=True)
class Storage:
    """One engine's stores."""

    engine: str
    meta: MetaTable
    messages: MessageStore
    topic_messages: TopicMessageStore
    log: OperationLogStore
    pressure: Pressure = field(default_factory=Pressure, kw_only=True)  # the load its message store observed, by queue
    rates: RateCounter = field(default_factory=ProcessRateCounter, kw_only=True)  # requests per second, for limits
