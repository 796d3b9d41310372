"""The engine's placement state of each queue (`placement.Placement`), kept in the queue's record of the meta table.

The catalog (`mnsd.control.catalog`) reads and writes queue records through the engine's meta table, which is a
`QueueRecords`: it stores a new queue's record with the engine's initial placement beside the catalog's fields
(and answers records without them: they are the engine's), and remembers the queue records it read, listed or stored, by
queue id. `Placements` reads a queue's placement from
there while it is younger than `cache_seconds` (the catalog caches its queue records as long, so a queue looked
up by the catalog costs no second read), else reads the record itself (found by the queue id's entry in the
catalog's map, `QUEUE_IDS`, when this container never saw it; a queue's receiver, an incarnation with no queue record
of its own, has its entry there made as a record, with its `queue_id`, which holds its placement as a queue's record
does). Its updates are conditional on the incarnation and
on the state this container saw, so containers that decide the same change at once make it once; an update that
fails re-reads the record. A queue id with no record (a deleted queue; the contract suite's queues) is placed as
`unrecorded`, for `cache_seconds` before it is looked up again.
"""

from __future__ import annotations

import dataclasses
import threading
from dataclasses import dataclass

from mnsd.control.catalog import QUEUE, QUEUE_IDS, queue_scope
from mnsd.ground.clock import Clock, ms
from mnsd.model.ports import MetaTable, Record
from mnsd.storage.dynamodb.placement.placement import FIELDS, Placement

LISTING_LAG_SECONDS = 1.0  # how far behind an eventually consistent listing may be (DynamoDB: usually under 1 s)
_REMEMBERED = 20_000  # queue records a container remembers (then it starts afresh): the sampler lists every queue


@dataclass
class _Seen:
    scope: str
    name: str
    record: Record
    at: float  # clock time it was read or written


def _queue_record(scope: str, record: Record) -> bool:
    return scope.partition("#")[2] == QUEUE and "queue_id" in record


def _theirs(record: Record | None) -> Record | None:
    """A record without the engine's fields."""
    return None if record is None else {k: v for k, v in record.items() if k not in FIELDS}


class QueueRecords:
    """The meta table (`MetaTable`), remembering the queue records that pass through it and placing new queues."""

    def __init__(self, table: MetaTable, clock: Clock, new_stripes: int) -> None:
        self.table = table
        self.clock = clock
        self.new_stripes = new_stripes
        self._lock = threading.Lock()
        self._seen: dict[str, _Seen] = {}  # by queue id

    def _remember(self, scope: str, name: str, record: Record | None) -> None:
        if record is None or not _queue_record(scope, record):
            return
        with self._lock:
            if len(self._seen) >= _REMEMBERED:
                self._seen.clear()
            self._seen[str(record["queue_id"])] = _Seen(scope, name, record, self.clock.now())

    def seen(self, queue_id: str) -> _Seen | None:
        with self._lock:
            return self._seen.get(queue_id)

    def create(self, scope: str, name: str, record: Record) -> Record | None:
        if _queue_record(scope, record):
            record = {**record, **Placement.new(self.new_stripes, ms(self.clock.now())).record()}
        existing = self.table.create(scope, name, record)
        self._remember(scope, name, record if existing is None else existing)
        return _theirs(existing)

    def get(self, scope: str, name: str) -> Record | None:
        record = self.table.get(scope, name)
        self._remember(scope, name, record)
        return _theirs(record)

    def update(self, scope: str, name: str, changes: Record, expected: Record | None = None) -> bool:
        return self.table.update(scope, name, changes, expected)

    def update_placement(self, seen: _Seen, changes: Record, expected: Record) -> bool:
        """Apply placement changes to a remembered queue record if it holds `expected` (and is the same incarnation)."""
        expected = {"queue_id": seen.record["queue_id"], **expected}
        if not self.table.update(seen.scope, seen.name, changes, expected):
            return False
        self._remember(seen.scope, seen.name, {**seen.record, **changes})
        return True

    def put(self, scope: str, name: str, record: Record) -> None:
        self.table.put(scope, name, record)

    def delete(self, scope: str, name: str) -> Record | None:
        return _theirs(self.table.delete(scope, name))

    def count(self, scope: str) -> int:
        return self.table.count(scope)

    def list(
        self, scope: str, prefix: str, limit: int, start_after: str | None
    ) -> tuple[list[tuple[str, Record]], bool]:
        started = self.clock.now()
        found, more = self.table.list(scope, prefix, limit, start_after)
        for name, record in found:  # a listing (the sampler's, every minute) places the queues it read at no read more
            self._remember_listed(scope, name, record, started)
        return [(name, _theirs(record) or {}) for name, record in found], more

    def _remember_listed(self, scope: str, name: str, record: Record, started: float) -> None:
        """A record a listing read (eventually consistent: usually less than a second behind) replaces only one
        remembered before that: never what this container wrote or read just before."""
        queue_id = record.get("queue_id")
        seen = self.seen(str(queue_id)) if queue_id is not None else None
        if seen is None or seen.at < started - LISTING_LAG_SECONDS:
            self._remember(scope, name, record)


class Placements:
    """Each queue incarnation's `Placement`, read and updated in its queue record (see the module's docstring)."""

    def __init__(self, records: QueueRecords, cache_seconds: float, unrecorded: Placement | None = None) -> None:
        self.records = records
        self.cache_seconds = cache_seconds
        self.unrecorded = unrecorded or Placement()
        self._lock = threading.Lock()
        self._unknown: dict[str, float] = {}  # queue ids without a record, and when that was found

    def _fresh(self, at: float) -> bool:
        return self.records.clock.now() - at < self.cache_seconds

    def of(self, queue_id: str) -> Placement:
        seen = self.records.seen(queue_id)
        if seen is not None and self._fresh(seen.at):
            return Placement.of_record(seen.record)
        with self._lock:
            unknown = self._unknown.get(queue_id)
        if seen is None and unknown is not None and self._fresh(unknown):
            return self.unrecorded
        found = self._read(queue_id, seen)
        if found is not None:
            return Placement.of_record(found.record)
        with self._lock:
            if len(self._unknown) >= _REMEMBERED:
                self._unknown.clear()
            self._unknown[queue_id] = self.records.clock.now()
        return self.unrecorded if seen is None else Placement.of_record(seen.record)

    def _read(self, queue_id: str, seen: _Seen | None) -> _Seen | None:
        """The queue's record read now (found by its id when never seen), if it still holds this incarnation."""
        if seen is None:
            names = self.records.table.get(queue_scope(QUEUE_IDS), queue_id)
            if names is None:
                return None
            if names.get("queue_id") == queue_id:  # a receiver's incarnation: its entry is its record
                scope, name = queue_scope(QUEUE_IDS), queue_id
            else:
                scope, name = queue_scope(str(names["account"])), str(names["name"])
        else:
            scope, name = seen.scope, seen.name
        record = self.records.get(scope, name)
        if record is None or record.get("queue_id") != queue_id:
            return None
        return self.records.seen(queue_id)  # (the whole record, as `get` remembered it)

    def _update(self, queue_id: str, placement: Placement, changes: Record, expected: Record) -> Placement:
        seen = self.records.seen(queue_id)
        if seen is None:
            self.of(queue_id)  # (reads its record, if it has one)
            seen = self.records.seen(queue_id)
        if seen is None:
            return self.unrecorded  # (a queue without a record is never changed)
        if self.records.update_placement(seen, changes, expected):
            return placement
        found = self._read(queue_id, seen)
        return Placement.of_record((found or seen).record)

    def grow(self, queue_id: str, seen: Placement, stripes: int, now_ms: int) -> Placement:
        """The queue with `stripes` stripes if its record still has the count `seen` has, else as the record now is
        (another container changed it first)."""
        grown = seen.grown(stripes, now_ms)
        changes: Record = {"stripes": stripes, "widened_at": now_ms}
        if not seen.index_since:  # (else its index state is left as the record has it: it may be further on)
            changes.update(grown.index())
        record = self.records.seen(queue_id)
        if seen.stripes == 1 and record is not None and "stripes" not in record.record:
            return self._update(queue_id, grown, changes, {"stripes": None})  # (a record without it has one)
        return self._update(queue_id, grown, changes, {"stripes": seen.stripes})

    def widen(self, queue_id: str, seen: Placement, now_ms: int) -> Placement:
        """The queue with sends over all its stripes again from `now_ms` on (`Placement.send_width`)."""
        widened = dataclasses.replace(seen, widened_at=now_ms)
        return self._update(queue_id, widened, {"widened_at": now_ms}, {})

    def start_index(self, queue_id: str, seen: Placement, now_ms: int) -> Placement:
        """The queue with its writes keeping the ready index from `now_ms` on, unless its record already says since
        when (then as it is)."""
        started = seen.indexed_from(now_ms)
        return self._update(queue_id, started, started.index(), {"index_since": None})

    def advance_index(self, queue_id: str, seen: Placement, cursor: str | None) -> Placement:
        """The queue with its ready index built up to `cursor` (None: all of it) if its record still has the cursor
        `seen` has; else as the record now is."""
        built = seen.built_to(cursor)
        return self._update(queue_id, built, built.index(), {"index_cursor": seen.index_cursor})
