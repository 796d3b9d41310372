"""The storage boundary: what the domain services need from a database, as typed interfaces.

Two engines implement it: `mnsd.storage.dynamodb` (AWS, and moto in tests and `MNS_ENGINE=moto`)
and `mnsd.storage.sqlite` (the local runtime's embedded engine). Only an engine's own modules speak
its database (boto3 DynamoDB calls, SQL); the services see entities (`Message`, `Queue`, ...).

A queue's messages live in one of two stores, chosen once per queue by its kind: `Storage.messages` (a
`MessageStore`: standard queues and their receivers) and `Storage.fifo_messages` (a `FifoMessageStore`: FIFO
queues, whose messages keep their groups' order). Each store speaks for its own queues; a move (dead-lettering,
redrive) is asked of the source's store and writes the target, of either kind, in the target's shape. A receive
claims what its scan found through the scan (`ReadyScan.claim`, the one claim path): what the scan saw reaches its
claims there.

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
  `rewind` makes it receivable again, `drop_kept` forgets it or its retention ends;
- `enqueued_since`, followed from no cursor to the end, gives each message of its range that stays stored
  throughout exactly once (a queue's receivers copy the messages sent before they were created with it).

FIFO messages (a FIFO queue's, in `Storage.fifo_messages`: `Message.fifo`, `MessageRef.group`) keep the order
of their group, by the rules of `mnsd.model.fifo` (each engine keeps only how it stores them):
- `sequence` numbers a group's new messages (their `position`) above every earlier one of the group, a new group
  from `fifo.first_position` (its first send's time); an emptied group (`fifo.forgettable`) is forgotten by the
  engine's upkeep, and any group at the latest `fifo.GROUP_LIFETIME_MS` after its last send;
- a group is *held* while any of its messages is Inactive (in flight: `fifo.Hold`), and no longer: a message given
  back (re-timed to now or sooner than before) releases it when its last lease lapses; a FIFO store's scan returns
  nothing of a held group.
  Otherwise its *head* is its lowest-positioned unexpired message; if the head is Active, a FIFO store's scan may
  return the group's Active messages from the head on, in position order, up to the first that is not Active;
- a claim of a FIFO scan's candidates (`ReadyScan.claim`) takes, per group, a run that starts at the group's head,
  in one atomic step: the run is refused whole when the group is held, when a message before its first candidate remains, or
  when any of its candidates is not as observed or not Active (`fifo.claimable`: expired since the scan
  included). So no two runs of one group are ever in flight together;
- a group never holds back another: a FIFO store's scan finds free groups whatever the others' state;
- deleting, re-timing, moving (dead-lettering), expiring and rewinding a FIFO message keep these rules
  (a dead-lettered head frees its group; a lapsed head is the group's head again).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from mnsd.model.messages import Message, MessageRef
from mnsd.model.queues import Backlog, QueueCounts
from mnsd.model.topics import TopicMessage

if TYPE_CHECKING:
    from mnsd.log.history import HistoryRead
    from mnsd.log.metrics import LogRead
    from mnsd.log.oplog import LogRecord

Record = dict[str, Any]  # a control-plane record: JSON-like values (str, int, bool, lists, maps)


class Claim(Protocol):
    """How a scan's candidates are claimed: in their order until `count` are owned; the claimed ones."""

    def __call__(self, candidates: list[Message], count: int, now_ms: int, visible_at: int) -> list[Message]: ...


# How many candidates a receive's scan offers per message it claims (and at least, at most): consumers pick at random
# among them, so concurrent receives rarely race for the same lease. A page of 16 small index items costs what a page
# of 1 does on DynamoDB (half a read unit).
CANDIDATES_PER_MESSAGE = 4
MIN_CANDIDATES = 16
MAX_CANDIDATES = 64


def candidates(count: int) -> int:
    """How many Active messages a receive's scan of `count` looks for (`MessageStore.scan_ready`)."""
    return min(MAX_CANDIDATES, max(MIN_CANDIDATES, count * CANDIDATES_PER_MESSAGE))


@dataclass(frozen=True)
class ReadyScan:
    """A receive's scan: Active messages found in queue order, and when the next inactive or delayed one becomes
    receivable; and the one way to claim messages, bound by the engine to what its scan saw (`claim`)."""

    messages: list[Message]
    next_visible_at: int | None
    claimer: Claim = field(kw_only=True, repr=False, compare=False)

    def claim(self, candidates: list[Message], count: int, now_ms: int, visible_at: int) -> list[Message]:
        """Claim candidates (this scan's messages, or some of them, in the caller's order) until `count` are owned:
        each `message.received(now_ms, visible_at)` if its lease is still as observed and Active (of any number of
        concurrent claims of one message, exactly one succeeds). An engine may skip the rest of a partition's
        candidates once a claim there was lost to another consumer, and may do the work a receive leaves (placing the
        queue) after them.

        A FIFO queue's candidates (its scan's runs, in its order): per group, the first of its candidates up to
        `count` owned, as one run (see the module's docstring); a group's run refused leaves none of it claimed."""
        return self.claimer(candidates, count, now_ms, visible_at)


class MessageStore(Protocol):
    """A queue's messages, by queue incarnation (`queue_id`): what the queue services ask of them. How an engine places
    them (partitions, indexes) and follows each queue's load is its own affair: it learns the load from these calls.

    A store serves queues of one kind (`Storage.messages`: standard queues; `Storage.fifo_messages`: FIFO ones),
    chosen once per queue by the service. Only `move` writes another queue, possibly of the other kind (a dead
    letter, a redrive): it writes the target in the target's shape."""

    def new_ids(self, queue_id: str, count: int, now_ms: int, groups: Sequence[str] = ()) -> list[str]:
        """Ids for `count` new messages of the queue (`mnsd.storage.ids.new_message_id`), whoever sends them (they
        count in the load the engine places the queue by); `groups`, a FIFO send's messages' groups, in order (an
        engine may store each group's messages of a batch together, and name them so)."""
        ...

    def put(self, messages: list[Message]) -> set[str]:
        """Store new messages of this store's queues (their ids from `new_ids`; a queue's and its receivers' copies
        together); the ids of those that could not be stored."""
        ...

    def delete_many(self, leases: list[tuple[MessageRef, int]], now_ms: int) -> list[bool]:
        """Delete each (ref, version) whose lease is still the one a receipt handle (`version`) names, while it is
        still hidden; whether each was deleted."""
        ...

    def change_visibility(self, ref: MessageRef, version: int, now_ms: int, visible_at: int) -> bool:
        """Re-time a message whose lease is still the one a receipt handle names (`Message.retimed`)."""
        ...

    def scan_ready(self, queue_id: str, now_ms: int, count: int) -> ReadyScan:
        """A receive's scan for `count` messages: about `candidates(count)` Active, unexpired messages in queue order
        (bodies may be left unloaded), to be claimed through it (`ReadyScan.claim`). An engine of many partitions may
        stop reading further ones once it has `count`, and may read a wider page while consumers contend.

        A FIFO queue's: the runs of free groups (see above), each run's messages together and in position order,
        the groups in any order (an engine may pick them at random, so consumers spread)."""
        ...

    def peek_ready(self, queue_id: str, now_ms: int, wanted: int) -> list[Message]:
        """Up to `wanted` Active, unexpired messages in queue order, from every partition (bodies may be left unloaded):
        what a peek shows and a redrive moves. A FIFO queue's: the runs of free groups, as `scan_ready`'s."""
        ...

    def load_bodies(self, messages: list[Message]) -> None:
        """Fill in the bodies (and what else) a scan or a claim left out."""
        ...

    def counts(self, queue_id: str, now_ms: int) -> QueueCounts:
        """Active, Inactive and Delayed messages (approximate beyond a bounded sample where the engine says)."""
        ...

    def backlog(self, queue_id: str, now_ms: int) -> Backlog:
        """`counts`, and the enqueue time of the oldest unexpired message that is Active or Inactive (neither delayed
        nor kept for rewind), found in what the count reads: as exact as the counts are, from the messages read
        beyond that (the metrics' gauges, `mnsd.metrics`)."""
        ...

    # --- dead letters and rewind ------------------------------------------------------------

    def move(self, source: Message, now_ms: int, target: Message) -> bool:
        """Atomically remove `source` (a message of this store's, if its lease is still as observed and Active) and
        store `target` (a new message of any queue, standard or FIFO: in its own kind's shape)."""
        ...

    def delete_keeping(self, leases: list[tuple[MessageRef, int]], now_ms: int) -> list[bool]:
        """`delete_many`, but each deleted message is kept (invisible, uncounted) for `rewind`."""
        ...

    def rewind(self, queue_id: str, since_ms: int, now_ms: int) -> int:
        """Make the kept and in-flight messages enqueued at or after `since_ms` receivable now; how many."""
        ...

    def drop_kept(self, queue_id: str, now_ms: int) -> int:
        """Forget the messages kept for rewind; how many."""
        ...


class StandardMessageStore(MessageStore, Protocol):
    """A standard queue's messages (and its receivers'), and what a receiver created with an earlier StartTime copies
    of them. (A FIFO queue's receivers start when created: `mnsd.model.kinds.FIFO_START`.)"""

    def enqueued_since(
        self, queue_id: str, since_ms: int, until_ms: int, now_ms: int, after: str | None, limit: int
    ) -> tuple[list[Message], str | None]:
        """A page of the queue's unexpired messages enqueued at or after `since_ms` and before `until_ms`, whatever
        their state (receivable, in flight, delayed, or kept for rewind), bodies loaded, in an order of the engine's;
        and the cursor to read on from (`after`; None: from the start), None when no more follow. A page holds at most
        `limit` messages, and may hold fewer (none) before the end: an engine bounds what one call reads."""
        ...


class FifoMessageStore(MessageStore, Protocol):
    """A FIFO queue's messages (`Message.fifo`, in groups): the rules above kept by every call, and its groups'
    numbering and state besides."""

    def sequence(self, queue_id: str, group: str, count: int, now_ms: int) -> int:
        """The first of `count` consecutive positions for new FIFO messages of `group`: above every position
        the group was given before (in this queue incarnation)."""
        ...

    def held_groups(self, queue_id: str, now_ms: int, limit: int) -> list[str]:
        """Up to `limit` groups of the queue that have a message in flight now (any order)."""
        ...


class MetaTable(Protocol):
    """Control-plane records by (scope, name): a scope holds an account's records of one kind (its queues, its topics,
    a topic's subscriptions); `mnsd.control.catalog` gives them their meaning."""

    def create(self, scope: str, name: str, record: Record) -> Record | None:
        """Store a new record; if the name is taken, return the record that holds it instead."""
        ...

    def get(self, scope: str, name: str) -> Record | None: ...

    def update(self, scope: str, name: str, changes: Record, expected: Record | None = None) -> bool:
        """Apply changes to an existing record; False if there is none, or if it does not hold the `expected`
        values (None: the attribute must be absent)."""
        ...

    def put(self, scope: str, name: str, record: Record) -> None: ...

    def delete(self, scope: str, name: str) -> Record | None:
        """Delete a record; the deleted record, or None if there was none."""
        ...

    def count(self, scope: str) -> int: ...

    def list(
        self, scope: str, prefix: str, limit: int, start_after: str | None
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

    def history(self, account: str, kind: str, resource: str, message_id: str, limit: int) -> HistoryRead:
        """The records of one message of `{account}#{kind}#{resource}`, by an index on the message's id (never a
        scan of the partition), at most `limit` (`truncated` when more were left unread), in any order."""
        ...


class RateCounter(Protocol):
    def take(self, key: str, second: int, limit: int) -> bool:
        """Count one request of `key` in epoch second `second`; False (and not counted) once `limit` are counted."""
        ...


class SignatureNonces(Protocol):
    def first_use(self, key: str, expires: int) -> bool:
        """Record a signature nonce until epoch second `expires`; False if it was recorded already (a replay)."""
        ...
