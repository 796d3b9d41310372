"""The lease rules on the Message entity, without any engine."""

import pytest

from mnsd.model.messages import Message, MessageRef, MessageState, lease_state

NOW = 1_700_000_000_000


def fresh(delay_ms: int = 0) -> Message:
    return Message("q", "M1", 8, NOW + delay_ms, NOW + delay_ms, 0, 0, NOW, NOW, NOW // 1000 + 60, "MD5")


def test_states():
    assert fresh().state_at(NOW) is MessageState.ACTIVE
    assert fresh(5000).state_at(NOW) is MessageState.DELAYED
    assert fresh(5000).state_at(NOW + 5000) is MessageState.ACTIVE
    assert fresh().state_at(NOW + 60_000) is MessageState.EXPIRED
    assert lease_state(NOW + 1, 1, NOW // 1000 + 60, NOW) is MessageState.INACTIVE


def test_received_hides_counts_and_stamps_the_first_dequeue():
    first = fresh().received(NOW + 10, NOW + 30_010)
    assert (first.visible_at, first.version, first.dequeue_count, first.first_dequeue_time) == (
        NOW + 30_010,
        1,
        1,
        NOW + 10,
    )
    assert first.state_at(NOW + 20) is MessageState.INACTIVE
    second = first.received(NOW + 30_010, NOW + 40_000)
    assert (second.version, second.dequeue_count, second.first_dequeue_time) == (2, 2, NOW + 10)


def test_only_active_messages_are_received():
    with pytest.raises(ValueError):
        fresh(5000).received(NOW, NOW + 1000)
    with pytest.raises(ValueError):
        fresh().received(NOW, NOW + 1000).received(NOW + 5, NOW + 2000)


def test_retimed_needs_the_current_handle_while_hidden():
    held = fresh().received(NOW, NOW + 1000)
    assert held.held_by(1, NOW + 999)
    assert not held.held_by(0, NOW + 10)
    assert not held.held_by(1, NOW + 1000)  # visible again
    moved = held.retimed(1, NOW + 10, NOW + 9000)
    assert (moved.visible_at, moved.version, moved.dequeue_count) == (NOW + 9000, 2, 1)
    with pytest.raises(ValueError):
        held.retimed(0, NOW + 10, NOW + 9000)
    assert fresh(5000).held_by(0, NOW)  # a delayed message's send handle may re-time or delete it


def test_message_ref_key_round_trips():
    ref = fresh(5).ref
    assert MessageRef.from_key("q", ref.key) == ref
    with pytest.raises(ValueError):
        MessageRef.from_key("q", "B123")
