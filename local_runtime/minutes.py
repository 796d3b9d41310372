"""The local runtime's gauge sampler: once a minute, every queue's (and receiver's) gauges into the minute ring
(`mnsd.metrics.ring.MinuteRing`), so the console's minute chart shows the depth of minutes nobody was looking at.

A round reads each queue's backlog as `GET /metrics` does (1,000 queues: ~0.06 s of the engine's time a minute,
`bench/results/metrics.md`) and drops the rings of queues idle for an hour.
"""

from __future__ import annotations

from collections.abc import Callable

from local_runtime.background import BackgroundLoop
from local_runtime.report import ErrorReport
from mnsd.ground.clock import ms
from mnsd.metrics import queue_labels
from mnsd.metrics.minutes import MINUTE_MS, gauge_values
from mnsd.metrics.ring import MinuteRing
from mnsd.queues.control import QueueControl

# A round runs this long after each minute starts (the minute's reading, whatever the clock's jitter).
OFFSET_MS = 1_000


def sample_gauges(queues: QueueControl, ring: MinuteRing, now_ms: int) -> int:
    """Records every queue's gauges read now; answers how many queues were read."""
    read = 0
    for queue in queues.every_queue():
        ring.record_gauges(
            queue_labels(queue.account_id, queue.name), gauge_values(queues.backlog(queue), now_ms), now_ms
        )
        read += 1
    ring.forget_idle(now_ms)
    return read


def until_next_round(now_ms: int) -> float:
    """Seconds from `now_ms` to the next round (`OFFSET_MS` into the next minute)."""
    return (now_ms // MINUTE_MS * MINUTE_MS + MINUTE_MS + OFFSET_MS - now_ms) / 1000


class GaugeSampler(BackgroundLoop):
    def __init__(self, queues: Callable[[], QueueControl], ring: MinuteRing) -> None:
        self.queues = queues
        self.ring = ring
        self.errors = ErrorReport("minute gauges")
        super().__init__("minute-gauges")

    def _run(self) -> None:
        while not self._stop.is_set():
            queues = self.queues()
            try:
                sample_gauges(queues, self.ring, ms(queues.clock.now()))
                self.errors.succeeded()
            except Exception as error:  # the next round reads them again
                self.errors.failed(error)
            self._stop.wait(until_next_round(ms(queues.clock.now())))
