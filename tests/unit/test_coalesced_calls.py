"""The bench's coalescing of concurrent single calls (`bench/coalesced_calls.py`), the holder's rule on the bench's
simulated clock: calls of one queue and operation within the window of the first go as one batch call, a full group
at once, a group whose end the clock passed takes no more, and when every client waits the clock moves on to the
earliest group's end."""

from __future__ import annotations

import threading
import time
from types import SimpleNamespace
from typing import Any

import pytest

from bench.coalesced_calls import Coalescer
from wait_tier.coalesce import MAX_REQUESTS, WINDOW_MS


def served(log: list[list[Any]]) -> Any:
    """A batch server that records each batch and answers each item with its own outcome."""

    def serve(items: list[Any]) -> list[Any]:
        log.append(list(items))
        return [f"done {item}" for item in items]

    return serve


def in_threads(coalescer: Coalescer, calls: list[Any], timeout: float = 10) -> list[Any]:
    """Run each call in a client thread of its own (which leaves when its call is answered); each one's result (or
    the exception it raised)."""
    results: list[Any] = [None] * len(calls)

    def run(i: int) -> None:
        try:
            results[i] = calls[i]()
        except Exception as error:  # noqa: BLE001 (the test looks at it)
            results[i] = error
        finally:
            coalescer.leave()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(calls))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout)
    assert not any(thread.is_alive() for thread in threads), "a call never got its answer"
    return results


def test_calls_that_come_together_go_as_one_batch_each_with_its_own_outcome_after_the_window():
    clock = SimpleNamespace(t=100.0)
    coalescer, log = Coalescer(clock, clients=3), []
    results = in_threads(coalescer, [lambda i=i: coalescer.call("send", "q", i, served(log)) for i in range(3)])
    assert sorted(results) == ["done 0", "done 1", "done 2"]
    assert len(log) == 1 and sorted(log[0]) == [0, 1, 2]
    assert coalescer.batch_sizes == {"send": [3]}
    # nothing else happened: the clock moved on to the group's end, the window's time passing
    assert clock.t == pytest.approx(100.0 + WINDOW_MS / 1000)


def test_a_call_after_the_groups_end_on_the_clock_opens_the_next_group():
    clock = SimpleNamespace(t=0.0)
    coalescer, log = Coalescer(clock, clients=2), []
    first: list[Any] = []
    thread = threading.Thread(target=lambda: first.append(coalescer.call("send", "q", "a", served(log))))
    thread.start()
    while not coalescer.groups:  # (the first call waits in its group)
        time.sleep(0.001)
    clock.t += 2 * WINDOW_MS / 1000  # another client's DynamoDB calls move the clock past the group's end
    thread.join(10)
    assert first == ["done a"] and log == [["a"]]
    coalescer.leave()  # (the first client is done)
    assert coalescer.call("send", "q", "b", served(log)) == "done b"
    assert coalescer.batch_sizes == {"send": [1, 1]}


def test_a_call_joins_the_open_group_until_the_clock_passes_its_end():
    clock = SimpleNamespace(t=1.0)
    coalescer = Coalescer(clock, clients=3)
    with coalescer.condition:
        first, leader = coalescer.group_for(("send", "q"))
        assert leader and first.ends == pytest.approx(1.0 + WINDOW_MS / 1000)
        clock.t = first.ends  # (at its end: still in)
        assert coalescer.group_for(("send", "q")) == (first, False)
        clock.t += 0.0001
        second, leader = coalescer.group_for(("send", "q"))
    assert leader and second is not first and first.closed and not second.closed


def test_a_full_group_goes_at_once_without_waiting_for_its_window():
    clock = SimpleNamespace(t=5.0)
    coalescer, log = Coalescer(clock, clients=MAX_REQUESTS + 4), []  # 4 clients that call nothing: never all waiting
    results = in_threads(
        coalescer, [lambda i=i: coalescer.call("delete", "q", i, served(log)) for i in range(MAX_REQUESTS)]
    )
    assert sorted(results) == sorted(f"done {i}" for i in range(MAX_REQUESTS))
    assert coalescer.batch_sizes == {"delete": [MAX_REQUESTS]} and clock.t == 5.0


def test_each_queue_and_operation_is_a_group_of_its_own():
    clock = SimpleNamespace(t=0.0)
    coalescer, log = Coalescer(clock, clients=4), []
    calls = [("send", "q1", 1), ("send", "q2", 2), ("delete", "q1", 3), ("send", "q1", 4)]
    in_threads(coalescer, [lambda c=c: coalescer.call(c[0], c[1], c[2], served(log)) for c in calls])
    assert sorted(sorted(batch) for batch in log) == [[1, 4], [2], [3]]
    assert sorted(coalescer.batch_sizes["send"]) == [1, 2] and coalescer.batch_sizes["delete"] == [1]


def test_a_client_waiting_for_work_lets_the_others_group_go():
    clock = SimpleNamespace(t=0.0)
    coalescer, log = Coalescer(clock, clients=2), []
    with coalescer.idle():  # (the other client waits for a message: it will not join)
        assert coalescer.call("receive", "q", "r", served(log)) == "done r"
    assert log == [["r"]]


def test_a_failed_batch_call_is_every_callers_failure():
    clock = SimpleNamespace(t=0.0)
    coalescer = Coalescer(clock, clients=2)

    def fail(items: list[Any]) -> list[Any]:
        raise OSError("the origin went away")

    results = in_threads(coalescer, [lambda i=i: coalescer.call("send", "q", i, fail) for i in range(2)])
    assert all(isinstance(r, OSError) for r in results)
