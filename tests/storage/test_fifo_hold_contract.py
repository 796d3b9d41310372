"""The storage contract of a FIFO group's hold and lifetime (`mnsd.model.fifo.Hold`, `fifo.forgettable`), on every
engine: a group is held while a message of its run in flight is hidden, and only that long; a message given back
(its visibility changed to now or to a second from now, as consumers "nack") releases its group when its new time
comes, the group's head first again; an emptied group is forgotten by the engine's upkeep and numbers anew.
"""

from __future__ import annotations

import pytest

from mnsd.model import fifo
from mnsd.model.kinds import FIFO
from mnsd.model.messages import Content, Message, body_md5
from mnsd.model.queues import MAX_RETENTION_SECONDS
from mnsd.storage import Storage
from tests.storage.engines import end_lifetimes
from tests.support.fifo_stored import NOW, RETENTION, fifo_message, runs, send, take

THIRTY_S = NOW + 10 + 30_000  # a receive's visibility: 30 s


def give_back(storage: Storage, message: Message, now: int, seconds: int) -> Message:
    """ChangeMessageVisibility of a received message to `seconds` from `now`; the message as it leaves it."""
    visible_at = now + seconds * 1000
    assert storage.fifo_messages.change_visibility(message.ref, message.version, now, visible_at)
    return message.retimed(message.version, now, visible_at)


@pytest.mark.parametrize("seconds", [0, 1])
def test_a_message_given_back_releases_its_group_when_its_new_time_comes(storage, seconds):
    """Three messages in one group, the first received for 30 s and given back: the same head comes back then, not
    30 s later (DynamoDB once kept the group held until the receive's 30 s)."""
    send(storage, "a", "a", "a")
    (head,) = take(storage, NOW + 10, 1, THIRTY_S)
    give_back(storage, head, NOW + 20, seconds)
    back = NOW + 20 + seconds * 1000
    if seconds:
        assert runs(storage, back - 1) == {}
        assert storage.fifo_messages.held_groups("q1", back - 1, 10) == ["a"]
    assert runs(storage, back) == {"a": ["M00000", "M00001", "M00002"]}
    assert storage.fifo_messages.held_groups("q1", back, 10) == []
    (again,) = take(storage, back, 1, back + 30_000)
    assert (again.message_id, again.dequeue_count) == ("M00000", 2)


def test_a_run_given_back_releases_its_group_when_its_last_lease_lapses(storage):
    send(storage, "a", "a", "a", "b")
    one, two, three, _ = sorted(take(storage, NOW + 10, 4, THIRTY_S), key=lambda m: m.message_id)
    give_back(storage, one, NOW + 20, 0)
    give_back(storage, three, NOW + 20, 2)
    assert runs(storage, NOW + 3000) == {}  # `two` still hides until the receive's 30 s
    give_back(storage, two, NOW + 3000, 1)
    assert runs(storage, NOW + 3999) == {}
    assert runs(storage, NOW + 4000) == {"a": ["M00000", "M00001", "M00002"]}


def test_deleting_the_lease_that_held_longest_releases_the_group_at_the_others_time(storage):
    send(storage, "a", "a", "a")
    one, two = take(storage, NOW + 10, 2, THIRTY_S)
    give_back(storage, one, NOW + 20, 1)
    assert storage.fifo_messages.delete_many([(two.ref, two.version)], NOW + 30)[0]
    assert runs(storage, NOW + 1019) == {}
    assert runs(storage, NOW + 1020) == {"a": ["M00000", "M00002"]}


def test_a_longer_visibility_holds_the_group_longer(storage):
    send(storage, "a", "a")
    (head,) = take(storage, NOW + 10, 1, THIRTY_S)
    give_back(storage, head, NOW + 20, 60)
    assert runs(storage, THIRTY_S + 1) == {}
    assert runs(storage, NOW + 60_020) == {"a": ["M00000", "M00001"]}


def test_a_delayed_message_retimed_or_deleted_by_its_send_handle_leaves_the_hold_as_it_was(storage):
    """A delayed message's send gives a receipt handle: re-timing it holds nothing, deleting it frees nothing (its
    group's run in flight still holds the group)."""
    send(storage, "a")
    delayed = fifo_message(storage, "a", 1, delay_ms=5000)
    other = fifo_message(storage, "a", 2, delay_ms=5000)
    storage.fifo_messages.put([delayed, other])
    (head,) = take(storage, NOW + 10, 1, THIRTY_S)
    assert storage.fifo_messages.delete_many([(delayed.ref, delayed.version)], NOW + 20)[0]
    assert storage.fifo_messages.change_visibility(other.ref, other.version, NOW + 20, NOW + 40_000)
    assert runs(storage, NOW + 6000) == {}
    assert storage.fifo_messages.held_groups("q1", NOW + 6000, 10) == ["a"]
    give_back(storage, head, NOW + 6000, 0)
    assert runs(storage, NOW + 6000) == {"a": ["M00000"]}  # (`other` delayed to NOW + 40 s: not yet)
    assert storage.fifo_messages.held_groups("q1", NOW + 6000, 10) == []


def test_a_rewind_that_leaves_a_message_in_flight_leaves_its_hold(storage):
    """A rewind since after a message's enqueue leaves it in flight: its group stays held by it, and giving it back
    then releases the group."""
    send(storage, "a", "a")
    (head,) = take(storage, NOW + 10, 1, THIRTY_S)
    assert storage.fifo_messages.rewind("q1", NOW + 1, NOW + 20) == 0
    assert runs(storage, NOW + 30) == {}
    give_back(storage, head, NOW + 40, 0)
    assert runs(storage, NOW + 40) == {"a": ["M00000", "M00001"]}


@pytest.mark.parametrize("seconds", [0, 1])
def test_a_receivers_copy_given_back_releases_its_group_in_that_receiver_alone(storage, seconds):
    """A receiver's copies are FIFO messages of its own incarnation: giving one back releases the receiver's group,
    while the queue's own group stays held by its own run."""
    originals = send(storage, "a", "a")
    counter = lambda group, count: storage.fifo_messages.sequence("q1-r1", group, count, NOW)  # noqa: E731
    copies = FIFO.placed([FIFO.copied(m, "q1-r1", f"C{n:05d}") for n, m in enumerate(originals)], counter)
    assert storage.fifo_messages.put(copies) == set()
    take(storage, NOW + 10, 1, THIRTY_S)  # the queue's head, 30 s
    offered = storage.fifo_messages.scan_ready("q1-r1", NOW + 10, 10)
    (copy,) = offered.claim(offered.messages[:1], 1, NOW + 10, THIRTY_S)
    give_back(storage, copy, NOW + 20, seconds)
    back = NOW + 20 + seconds * 1000
    assert runs(storage, back, queue_id="q1-r1") == {"a": ["C00000", "C00001"]}
    assert runs(storage, back) == {}


# --- an emptied group's lifetime -----------------------------------------------------------------------------


def upkeep(storage: Storage, now: int) -> None:
    """What each engine does in its own time with what it keeps: a receive's scan (DynamoDB forgets the emptied
    groups it meets), the end of lifetimes (DynamoDB's TTL, SQLite's sweep)."""
    runs(storage, now)
    end_lifetimes(storage, now)


def test_an_emptied_group_is_forgotten_and_numbers_anew(storage):
    """`fifo.forgettable`: a group that stores, keeps and holds nothing is forgotten by the engine's upkeep (once no
    send of it can be in transit, `fifo.SEND_SETTLE_MS`); a send then makes it anew from its time (`first_position`)
    (DynamoDB once forgot it at once, SQLite after `fifo.GROUP_LIFETIME_MS`)."""
    (head,) = send(storage, "a")
    (claimed,) = take(storage, NOW + 10, 1, THIRTY_S)
    assert storage.fifo_messages.delete_many([(claimed.ref, claimed.version)], NOW + 20)[0]
    settled = NOW + fifo.SEND_SETTLE_MS
    upkeep(storage, settled)
    assert storage.fifo_messages.sequence("q1", "a", 1, settled) == fifo.first_position(settled) == settled
    assert head.position == NOW


def test_a_group_that_stores_or_keeps_a_message_keeps_its_counter(storage):
    send(storage, "a", "b")
    (kept,) = [m for m in take(storage, NOW + 10, 2, THIRTY_S) if m.message_group_id == "b"]
    assert storage.fifo_messages.delete_keeping([(kept.ref, kept.version)], NOW + 20) == [True]
    later = NOW + fifo.SEND_SETTLE_MS + 60_000
    upkeep(storage, later)
    assert storage.fifo_messages.sequence("q1", "a", 1, later) == NOW + 1  # stores M00000 (in flight, lapsed)
    assert storage.fifo_messages.sequence("q1", "b", 1, later) == NOW + 1  # keeps M00001 for rewind


def test_a_group_is_forgotten_at_the_latest_its_lifetime_after_its_last_send(storage):
    """`fifo.GROUP_LIFETIME_MS`, beyond the longest retention: whatever an engine counts of a group, it is gone then."""
    text = "a-0"
    content = Content(body_md5(text), text, 8, message_group_id="a", fifo=True)
    position = storage.fifo_messages.sequence("q1", "a", 1, NOW)
    expires = NOW // 1000 + MAX_RETENTION_SECONDS  # (15 days: a group outlives a message kept the longest)
    storage.fifo_messages.put([Message.enqueued("q1", "M00000", NOW, NOW, expires, content, position)])
    within = expires * 1000 - 1000
    upkeep(storage, within)
    assert storage.fifo_messages.sequence("q1", "a", 1, within) == NOW + 1
    later = fifo.group_expires_at(within) + 1000
    upkeep(storage, later)
    assert storage.fifo_messages.sequence("q1", "a", 1, later) == later
    assert RETENTION < MAX_RETENTION_SECONDS
