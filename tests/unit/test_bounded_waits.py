"""Long polls waiting at once in the local server, bounded (`local_runtime.waits`): the one past the bound is answered
503 ServiceUnavailable at once, and a slot is free again when a wait ends."""

from __future__ import annotations

import threading

import pytest

from local_runtime.waits import BoundedWaits
from mnsd.ground import errors
from mnsd.queues.notifier import LocalNotifier


def test_a_wait_past_the_bound_is_refused_and_a_slot_comes_back():
    waits = BoundedWaits(LocalNotifier(), limit=2)
    started = threading.Barrier(3)
    holders = [threading.Thread(target=lambda: (started.wait(), waits.wait("q", 0.5))) for _ in range(2)]
    for holder in holders:
        holder.start()
    started.wait()
    threading.Event().wait(0.1)  # both waiting
    with pytest.raises(errors.ServiceUnavailable) as refused:
        waits.wait("q", 0.5)
    assert refused.value.status == 503
    waits.notify("q")  # wakes the waiting ones
    for holder in holders:
        holder.join(timeout=2)
    waits.wait("q", 0.01)  # free again
