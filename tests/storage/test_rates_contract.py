"""The request counter behind limits (`Storage.rates`), the same on every engine."""

from __future__ import annotations

import threading

from mnsd.storage import Storage

SECOND = 1_800_000_000


def test_a_key_takes_its_limit_in_a_second_and_no_more(storage: Storage):
    taken = [storage.rates.take("queue:q1", SECOND, 3) for _ in range(5)]
    assert taken == [True, True, True, False, False]
    assert storage.rates.take("queue:q2", SECOND, 3)  # another key counts apart
    assert storage.rates.take("queue:q1", SECOND + 1, 3)  # the next second starts again


def test_concurrent_takers_never_pass_the_limit(storage: Storage):
    results: list[bool] = []
    lock = threading.Lock()

    def take() -> None:
        for _ in range(10):
            ok = storage.rates.take("account:a", SECOND, 25)
            with lock:
                results.append(ok)

    threads = [threading.Thread(target=take) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results.count(True) == 25


def test_a_limit_above_one_items_share_is_reached_whole(storage: Storage):
    taken = sum(storage.rates.take("account:big", SECOND, 1200) for _ in range(3000))
    assert taken == 1200
