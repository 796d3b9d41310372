"""A queue's kind (`mnsd.model.kinds`): what differs between a standard and a FIFO queue, decided there alone."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mnsd.ground import errors
from mnsd.model.inputs import MessageInput
from mnsd.model.kinds import DEAD_LETTER_GROUP, FIFO, KINDS, STANDARD, kind_of
from mnsd.model.messages import Content, Message
from mnsd.model.queues import QUEUE_TYPES, Queue, QueueAttributes

NOW = 1_700_000_000_000
LAYER = Path(__file__).resolve().parents[2] / "layers" / "mnsd" / "python" / "mnsd"


def queue(queue_type: str) -> Queue:
    return Queue("acct", "q", "q1", QueueAttributes(queue_type=queue_type), 1, 1)


def message(n: int, group: str = "a", priority: int = 8, dequeue_count: int = 0, fifo: bool = True) -> Message:
    content = Content("", f"body {n}", priority, message_group_id=group, fifo=fifo)
    sent = Message.enqueued("q1", f"M{n}", NOW, NOW + n, NOW // 1000 + 3600, content)
    return Message(**{**sent.__dict__, "dequeue_count": dequeue_count})


def ids(messages: list[Message]) -> list[str]:
    return [m.message_id for m in messages]


def test_a_queues_kind_is_read_from_its_queue_type_and_every_queue_type_has_one():
    assert sorted(KINDS) == sorted(QUEUE_TYPES)
    assert kind_of(queue("fifo")) is FIFO
    assert kind_of(queue("normal")) is STANDARD
    assert (FIFO.name, STANDARD.name) == ("fifo", "normal")


@pytest.mark.parametrize(
    "sent",
    [
        MessageInput("b", None, 8),  # no MessageGroupId
        MessageInput("b", 5, 8, message_group_id="g"),  # its own delay
        MessageInput("b", None, 3, message_group_id="g", priority_given=True),
        MessageInput("b", None, 8, message_group_id="has space"),
    ],
)
def test_a_fifo_queue_refuses_what_a_standard_queue_takes(sent: MessageInput):
    STANDARD.check_sent(sent)
    with pytest.raises(errors.InvalidArgument):
        FIFO.check_sent(sent)


def test_a_standard_queue_takes_candidates_by_priority_and_a_fifo_queue_in_the_scans_order():
    scanned = [message(1, priority=9), message(2, priority=1), message(3, priority=5)]
    assert ids(STANDARD.candidates(scanned)) == ["M2", "M3", "M1"]
    assert ids(FIFO.candidates(scanned)) == ["M1", "M2", "M3"]


def test_nothing_spent_moves_nothing_and_keeps_every_candidate():
    candidates = [message(1), message(2, "b")]
    assert STANDARD.dead_letter_split(candidates, 3) == ([], candidates)
    assert FIFO.dead_letter_split(candidates, 3) == ([], candidates)


def test_a_standard_queue_moves_each_spent_message_alone_and_keeps_the_others():
    candidates = [message(1, dequeue_count=3), message(2), message(3, dequeue_count=4)]
    moves, kept = STANDARD.dead_letter_split(candidates, 3)
    assert [ids(m) for m in moves] == [["M1"], ["M3"]]
    assert ids(kept) == ["M2"]


def test_a_fifo_queue_moves_a_runs_spent_head_holds_its_group_and_cuts_another_run_before_its_spent_message():
    candidates = [message(1, "a", dequeue_count=3), message(2, "a"), message(3, "b"), message(4, "b", dequeue_count=3)]
    moves, kept = FIFO.dead_letter_split(candidates, 3)
    assert [ids(m) for m in moves] == [["M1"]]
    assert ids(kept) == ["M3"]  # group a waits; b's run ends before M4


def test_a_fifo_queue_places_new_messages_in_their_groups_from_each_groups_counter():
    read: list[tuple[str, int]] = []

    def counter(group: str, count: int) -> int:
        read.append((group, count))
        return {"a": 100, "b": 7, DEAD_LETTER_GROUP: 50}[group]

    new = [message(1, "a", fifo=False), message(2, "b", fifo=False), message(3, "a", fifo=False), message(4, "")]
    placed = FIFO.placed(new, counter)
    assert [(m.message_group_id, m.position, m.fifo) for m in placed] == [
        ("a", 100, True),
        ("b", 7, True),
        ("a", 101, True),
        (DEAD_LETTER_GROUP, 50, True),
    ]
    assert [m.visible_at for m in placed] == [m.visible_at for m in new]  # (receivable when they were)
    assert read == [("a", 2), ("b", 1), (DEAD_LETTER_GROUP, 1)]  # each counter read once


def test_a_standard_queue_places_messages_by_when_they_become_receivable_and_reads_no_counter():
    def counter(group: str, count: int) -> int:
        raise AssertionError("a standard queue has no group counters")

    placed = STANDARD.placed([message(1, "a"), message(2, "")], counter)
    assert [(m.message_group_id, m.position, m.fifo) for m in placed] == [("a", NOW + 1, False), ("", NOW + 2, False)]


def test_a_receivers_copy_is_receivable_when_the_message_first_was():
    received = Message(**{**message(1, fifo=False).__dict__, "visible_at": NOW + 60_000, "dequeue_count": 1})
    assert STANDARD.copied(received, "r1", "C1").visible_at == NOW + 1  # (its place: when it first was)
    fifo_sent = Message(**{**message(1).__dict__, "position": 5})
    copy = FIFO.copied(fifo_sent, "r1", "C1")
    assert (copy.queue_id, copy.message_id, copy.visible_at, copy.dequeue_count) == ("r1", "C1", NOW + 1, 0)


def test_a_fifo_queues_receiver_starts_when_it_is_created_and_a_standard_ones_may_start_earlier():
    now = NOW / 1000 + 0.5
    assert STANDARD.receiver_start(int(now) - 60, now) is True
    assert STANDARD.receiver_start(int(now), now) is True  # (the half second before its creation)
    assert FIFO.receiver_start(int(now), now) is False
    with pytest.raises(errors.InvalidArgument):
        FIFO.receiver_start(int(now) - 60, now)


def test_the_kind_chooses_the_store_the_groups_shown_and_a_pushed_messages_group():
    standard_store, fifo_store = object(), object()
    assert STANDARD.chosen_store(standard_store, fifo_store) is standard_store  # type: ignore[arg-type]
    assert FIFO.chosen_store(standard_store, fifo_store) is fifo_store  # type: ignore[arg-type]
    assert (STANDARD.held_groups(lambda: 4), FIFO.held_groups(lambda: 4)) == (None, 4)
    assert (STANDARD.group("", "sub"), FIFO.group("", "sub"), FIFO.group("g", "sub")) == ("", "sub", "g")


# (`queue.attributes.fifo` is gone; a QueueType compared with FIFO's name; a place in a group taken for FIFO-ness)
KIND_DECIDED = re.compile(r"\.attributes\.fifo\b|[!=]=\s*\"fifo\"|\"fifo\"\s*[!=]=|position is not None")


def test_no_module_of_the_layer_decides_by_kind_but_the_kind_object():
    deciding = [
        f"{path.relative_to(LAYER)}:{n}"
        for path in sorted(LAYER.rglob("*.py"))
        if path != LAYER / "model" / "kinds.py"
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if KIND_DECIDED.search(line)
    ]
    assert deciding == []
