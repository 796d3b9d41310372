"""Retention past MNS's 7 days (CMQ's range, 60 s to 1,296,000 s = 15 days), through the queue service on every
engine: a queue kept 15 days keeps its messages 14 days on the injected clock (sent one at a time and in a batch,
which the DynamoDB engine packs; a FIFO queue's groups; a receiver's copies; a receiver started 14 days back; a
rewind 14 days back) and loses them after 15, to reads and to each engine's own removal (DynamoDB's TTL, SQLite's
sweep)."""

from __future__ import annotations

import pytest

from mnsd.ground import errors
from mnsd.model.inputs import MessageInput
from mnsd.model.queues import MAX_RETENTION_SECONDS, QueueAttributeChanges, QueueCounts
from mnsd.queues.receivers import ReceiverInput
from tests.integration.receiving import receive_all
from tests.integration.services import ACCOUNT, ENGINES, service_on
from tests.storage.engines import end_lifetimes

DAY = 86_400
FIFTEEN_DAYS = str(MAX_RETENTION_SECONDS)


@pytest.fixture(params=ENGINES)
def service(request, clock):
    yield from service_on(request, clock)


def counts(service, name: str) -> QueueCounts:
    return service.queue_counts(service.get_queue(ACCOUNT, name))


def bodies(received) -> list[str]:
    return sorted(r.message.body for r in received)


def nothing_to_receive(service, name: str) -> bool:
    try:
        service.receive(ACCOUNT, name, 16, 0)
    except errors.MessageNotExist:
        return True
    return False


def test_a_queue_kept_15_days_keeps_its_messages_14_days_and_loses_them_after_15(service, clock):
    assert MAX_RETENTION_SECONDS == 15 * DAY
    service.create_queue(ACCOUNT, "q", QueueAttributeChanges(message_retention_period=FIFTEEN_DAYS))
    service.create_queue(ACCOUNT, "f", QueueAttributeChanges(message_retention_period=FIFTEEN_DAYS, queue_type="fifo"))
    service.receivers.create(ACCOUNT, "q", "r", ReceiverInput())
    assert service.get_queue(ACCOUNT, "q").attributes.message_retention_period == 15 * DAY
    sent_at = clock.now()
    service.send(ACCOUNT, "q", [MessageInput("one", None, 8)])
    batch = [f"b{n:02d}" for n in range(16)]
    assert all(r.error is None for r in service.send(ACCOUNT, "q", [MessageInput(b, None, 8) for b in batch]))
    ordered = [MessageInput(f"g{n}", None, 8, message_group_id="G") for n in range(3)]
    assert all(r.error is None for r in service.send(ACCOUNT, "f", ordered))
    everything = sorted(["one", *batch])

    clock.advance(14 * DAY)
    end_lifetimes(service.services.storage, int(clock.now() * 1000))  # TTL and the sweep take nothing yet
    assert counts(service, "q") == counts(service, "q.r") == QueueCounts(17, 0, 0)
    assert counts(service, "f") == QueueCounts(3, 0, 0)
    # A receiver made now, starting when the messages were sent (14 days back), copies them too.
    service.receivers.create(ACCOUNT, "q", "late", ReceiverInput(start_time=str(int(sent_at))))
    assert bodies(receive_all(service, "q.late")) == everything
    assert bodies(receive_all(service, "q")) == everything
    assert bodies(receive_all(service, "q.r")) == everything
    assert [r.message.body for r in service.receive(ACCOUNT, "f", 16, 0)] == ["g0", "g1", "g2"]

    clock.advance(DAY - 60)  # received, their visibility (30 s) over: Active again, a minute before the end
    assert counts(service, "q") == QueueCounts(17, 0, 0)
    clock.advance(61)  # 15 days and a second after the sends
    for name in ("q", "q.r", "q.late", "f"):
        assert nothing_to_receive(service, name), name
        assert counts(service, name) == QueueCounts(0, 0, 0), name
    end_lifetimes(service.services.storage, int(clock.now() * 1000))
    with pytest.raises(errors.MessageNotExist):
        service.peek(ACCOUNT, "q", 16)


def test_rewind_reaches_14_days_back_on_a_queue_kept_15_days(service, clock):
    changes = QueueAttributeChanges(message_retention_period=FIFTEEN_DAYS, rewind_period=FIFTEEN_DAYS)
    service.create_queue(ACCOUNT, "w", changes)
    sent_at = int(clock.now())
    service.send(ACCOUNT, "w", [MessageInput(f"m{n}", None, 8) for n in range(3)])
    received = receive_all(service, "w")
    assert service.batch_delete(ACCOUNT, "w", [r.receipt_handle for r in received]) == []
    clock.advance(14 * DAY)
    assert nothing_to_receive(service, "w")
    assert service.rewind(ACCOUNT, "w", str(sent_at)) == 3
    assert bodies(receive_all(service, "w")) == ["m0", "m1", "m2"]


@pytest.mark.parametrize("value", ["59", str(MAX_RETENTION_SECONDS + 1)])
def test_a_retention_outside_60_s_to_15_days_is_refused(service, value):
    with pytest.raises(errors.InvalidArgument) as refused:
        service.create_queue(ACCOUNT, "q", QueueAttributeChanges(message_retention_period=value))
    assert refused.value.message == "The value of MessageRetentionPeriod should between 60 and 1296000 seconds."
    service.create_queue(ACCOUNT, "q")  # (MNS's default, 3 days)
    assert service.get_queue(ACCOUNT, "q").attributes.message_retention_period == 3 * DAY
    with pytest.raises(errors.InvalidArgument):
        service.set_queue_attributes(ACCOUNT, "q", QueueAttributeChanges(message_retention_period=value))
