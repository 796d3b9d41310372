"""FIFO traffic on the DynamoDB engine as the FIFO contract makes it (single sends, packed batches, claims, a visibility
change, deletes kept and not, a rewind, turning rewind off, dead-letter moves, a placement grown so free groups move),
`snapshot` called after each step: what every kind of a FIFO queue's own item and of a placed queue record comes from."""

from __future__ import annotations

from collections.abc import Callable

from mnsd.control.catalog import Catalog
from mnsd.ground import actor
from mnsd.model import fifo as fifo_rules
from mnsd.model.messages import Content, Message, body_md5
from mnsd.model.queues import Queue, QueueAttributes
from mnsd.storage import Storage
from mnsd.storage.dynamodb.fifo.fifo_groups import FifoGroups
from tests.support.fifo_packs import batch
from tests.support.fifo_stored import NOW, RETENTION, VISIBLE, fifo_message, send, take


def _logged_batch(storage: Storage, group: str, size: int) -> list[Message]:
    """A batch of one group whose queue logs (its pack records sizes and who sent it)."""
    store = storage.fifo_messages
    ids = store.new_ids("q1", size, NOW, [group] * size)
    places = fifo_rules.positions([group] * size, lambda g, count: store.sequence("q1", g, count, NOW))
    sent = []
    for message_id, position in zip(ids, places, strict=True):
        content = Content(body_md5("log"), "log", 8, (), (), group, logging=True, fifo=True)
        sent.append(Message.enqueued("q1", message_id, NOW, NOW, NOW // 1000 + RETENTION, content, position))
    with actor.acting("AK"):
        assert store.put(sent) == set()
    return sent


def fifo_traffic(storage: Storage, snapshot: Callable[[], None] = lambda: None) -> None:
    """The traffic, on queue `q1` (a FIFO queue of account 1001 in the catalog), `snapshot` after each step."""
    fifo = storage.fifo_messages
    catalog = Catalog(storage.meta)
    catalog.create_queue(Queue("1001", "fifo", "q1", QueueAttributes(queue_type="fifo"), 1700000000, 1700000000))
    send(storage, "a", "a", "a")
    batch(storage, *"b" * 5)
    batch(storage, *"cdcd")
    logged = _logged_batch(storage, "e", 3)
    snapshot()
    claimed = take(storage, NOW + 10, 16, VISIBLE)
    snapshot()
    one = [m for m in claimed if m.message_group_id == "a"][0]
    assert fifo.change_visibility(one.ref, one.version, NOW + 20, VISIBLE + 5)
    snapshot()
    b = [m for m in claimed if m.message_group_id == "b"]
    assert fifo.delete_keeping([(m.ref, m.version) for m in b[:2]], NOW + 30) == [True, True]
    c = [m for m in claimed if m.message_group_id == "c"]
    assert fifo.delete_many([(m.ref, m.version) for m in c], NOW + 30) == [True] * len(c)
    snapshot()
    assert fifo.rewind("q1", NOW, NOW + 40) >= 2
    snapshot()
    fifo.drop_kept("q1", NOW + 50)
    snapshot()
    offered = fifo.peek_ready("q1", VISIBLE + 100, 100)
    head = next(m for m in offered if m.message_group_id != "e")
    target = fifo_message(storage, head.message_group_id, 9, queue_id="dlq")
    assert fifo.move(head, VISIBLE + 100, target)
    (logged_head,) = [m for m in offered if m.message_id == logged[0].message_id]
    assert fifo.move(logged_head, VISIBLE + 100, fifo_message(storage, "e", 10, queue_id="dlq"))
    snapshot()
    assert isinstance(fifo, FifoGroups)
    placements = fifo.placer.placements
    grown = placements.grow("q1", placements.of("q1"), 64, VISIBLE + 200)
    assert grown.stripes == 64
    placements.advance_index("q1", grown, "L08" + "0" * 13)
    fifo.peek_ready("q1", VISIBLE + 300, 100)  # (moves free groups to their home at the grown width)
    snapshot()
