"""A batch ChangeMessageVisibility through the queue service, on every engine: each handle by the rule of the single
change (`MessageService.change_visibility`), on its own (not atomic): 16 handles, 3 of them stale, change 13 and
report 3, and the 13 reappear at their new times, with their new handles good and the old ones spent."""

from __future__ import annotations

import pytest

from mnsd.ground import errors
from mnsd.model.inputs import MessageInput, VisibilityChange, visibility_batch
from mnsd.model.queues import QueueAttributeChanges
from tests.integration.receiving import receive_all
from tests.integration.services import ACCOUNT, ENGINES, service_on


@pytest.fixture(params=ENGINES)
def service(request, clock):
    yield from service_on(request, clock)


def batch(service, name: str, changes: list[VisibilityChange]):
    return service.services.messages.batch_change_visibility(service.get_queue(ACCOUNT, name), changes)


def visible_now(service, name: str) -> list[str]:
    return sorted(r.message.body for r in receive_all(service, name))


def test_16_handles_3_stale_change_13_each_reappearing_at_its_new_time(service, clock):
    service.create_queue(ACCOUNT, "q")
    service.create_queue(ACCOUNT, "other")
    service.send(ACCOUNT, "q", [MessageInput(f"m{n:02d}", None, 8) for n in range(16)])
    service.send(ACCOUNT, "other", [MessageInput("elsewhere", None, 8)])
    received = sorted(receive_all(service, "q"), key=lambda r: r.message.body)
    assert len(received) == 16
    elsewhere = receive_all(service, "other")[0]

    # Three stale handles: a deleted message's, one a change has renewed, and another queue's (given in place of
    # m02's, whose visibility a change moved out of the way).
    service.delete(ACCOUNT, "q", received[0].receipt_handle)
    for stale in received[1:3]:
        service.change_visibility(ACCOUNT, "q", stale.receipt_handle, 300)
    given = [(r.receipt_handle, "10" if n < 10 else None) for n, r in enumerate(received)]  # 7 at 10 s, 6 at 60
    given[2] = (elsewhere.receipt_handle, "10")
    now_ms = int(clock.now() * 1000)
    results = batch(service, "q", visibility_batch(given, "60"))

    assert [r.given for r in results] == [handle for handle, _ in given]
    failed = {n: r.error.code for n, r in enumerate(results) if r.error is not None}
    assert failed == {0: "MessageNotExist", 1: "MessageNotExist", 2: "ReceiptHandleError"}
    changed = {received[n].message.body: r for n, r in enumerate(results) if r.error is None}
    assert len(changed) == 13
    assert {r.next_visible_time - now_ms for r in changed.values()} == {10_000, 60_000}
    soon = sorted(body for body, r in changed.items() if r.next_visible_time == now_ms + 10_000)
    later = sorted(body for body, r in changed.items() if r.next_visible_time == now_ms + 60_000)
    assert (len(soon), len(later)) == (7, 6)

    with pytest.raises(errors.MessageNotExist):  # the old handles are spent
        service.delete(ACCOUNT, "q", received[5].receipt_handle)
    clock.advance(9.9)
    assert visible_now(service, "q") == []
    clock.advance(0.2)
    back = receive_all(service, "q")
    assert sorted(r.message.body for r in back) == soon
    assert {r.message.dequeue_count for r in back} == {2}
    assert service.batch_delete(ACCOUNT, "q", [r.receipt_handle for r in back]) == []
    clock.advance(30.0)  # the queue's own visibility (30 s) is over: the 6 still wait for their 60 s
    assert visible_now(service, "q") == []
    for body in later[:3]:  # their new handles are good while their time runs
        service.delete(ACCOUNT, "q", changed[body].receipt_handle)
    clock.advance(20.0)
    assert visible_now(service, "q") == later[3:]


def test_a_fifo_groups_run_given_back_in_one_batch_comes_back_in_order(service, clock):
    service.create_queue(ACCOUNT, "f", QueueAttributeChanges(queue_type="fifo"))
    service.send(ACCOUNT, "f", [MessageInput(f"g{n}", None, 8, message_group_id="G") for n in range(4)])
    run = receive_all(service, "f")
    assert [r.message.body for r in run] == ["g0", "g1", "g2", "g3"]
    results = batch(service, "f", visibility_batch([(r.receipt_handle, None) for r in reversed(run)], "0"))
    assert all(r.error is None for r in results)
    again = receive_all(service, "f")
    assert [(r.message.body, r.message.dequeue_count) for r in again] == [(f"g{n}", 2) for n in range(4)]


def test_a_single_timeout_for_the_batch_and_a_handle_changed_twice_in_one_batch(service, clock):
    service.create_queue(ACCOUNT, "q")
    service.send(ACCOUNT, "q", [MessageInput(f"m{n}", None, 8) for n in range(2)])
    one, two = receive_all(service, "q")
    results = batch(service, "q", visibility_batch([(one.receipt_handle, None), (one.receipt_handle, None)], "0"))
    assert results[0].error is None and results[0].next_visible_time == int(clock.now() * 1000)
    assert isinstance(results[1].error, errors.MessageNotExist)  # the first change spent it
    assert [r.message.body for r in receive_all(service, "q")] == [one.message.body]  # given back at once
    assert batch(service, "q", visibility_batch([(two.receipt_handle, "5")], None))[0].error is None


@pytest.mark.parametrize(
    ("entries", "default", "error"),
    [
        ([], "5", errors.InvalidArgument),
        ([("h", None)] * 17, "5", errors.InvalidArgument),
        ([("h", None)], None, errors.MissingVisibilityTimeout),
        ([("h", "43201")], None, errors.InvalidArgument),
        ([("h", None)], "-1", errors.InvalidArgument),
        ([("h", "1.5")], "5", errors.InvalidArgument),
    ],
)
def test_a_batch_is_checked_whole_before_any_handle_is_used(entries, default, error):
    with pytest.raises(error):
        visibility_batch(entries, default)
