"""The local runtime's clock for tests: the wall clock moved forward by a test, in its process or from another."""

from __future__ import annotations

import threading
import time

from local_runtime.clock import FileClock, OffsetClock, clock_from_env
from mnsd.ground.clock import SystemClock
from tests.support.local_server import ServerClock


def test_a_file_clock_reads_the_offset_the_test_writes(tmp_path):
    moved = ServerClock(tmp_path / "offset")
    clock = FileClock(tmp_path / "offset")
    assert abs(clock.now() - time.time()) < 1
    moved.advance(3600)
    assert abs(clock.now() - (time.time() + 3600)) < 1
    moved.advance(0.5)
    assert abs(clock.now() - moved.now()) < 0.1  # both sides agree on the server's time


def sleeps_until_moved(clock, advance) -> bool:
    """Whether a minute's sleep on `clock` ends soon after `advance` moves it two minutes on."""
    threading.Timer(0.2, advance, [120]).start()
    started = time.monotonic()
    clock.sleep(60)
    return time.monotonic() - started < 30


def test_a_sleep_on_a_file_clock_ends_once_another_process_has_moved_it_past(tmp_path):
    assert sleeps_until_moved(FileClock(tmp_path / "offset"), ServerClock(tmp_path / "offset").advance)


def test_a_sleep_on_an_offset_clock_ends_once_the_test_has_moved_it_past():
    clock = OffsetClock()
    assert sleeps_until_moved(clock, clock.advance)


def test_a_server_clock_tells_when_a_hit_came_by_the_server_s_time(tmp_path):
    clock = ServerClock(tmp_path / "offset")
    before = time.monotonic()
    clock.advance(100)
    after = time.monotonic()
    assert abs(clock.at(before) - (time.time() - (time.monotonic() - before))) < 0.1  # before the move
    assert abs(clock.at(after) - (time.time() + 100 - (time.monotonic() - after))) < 0.1


def test_the_runtime_runs_on_the_system_clock_unless_a_clock_file_is_named(tmp_path):
    assert isinstance(clock_from_env({}), SystemClock)
    assert isinstance(clock_from_env({"MNS_CLOCK_FILE": str(tmp_path / "offset")}), FileClock)
