"""The local runtime's fan-out: on threads, so publishing never waits for deliveries, and one lane per
subscription, so no subscription waits behind another's slow endpoint.

A published message goes to its topic's lane, which finds its subscriptions (quick: no endpoint is
contacted there); each first attempt then goes to its subscription's lane. An endpoint that hangs holds
its own lane's threads (each attempt for at most its 5 s deadline, then handed to the retry workflow),
never the threads of its siblings, of other topics or of other tenants.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Hashable, Sequence

from aws_lambda_powertools import Logger

from mnsd.model.topics import Subscription, TopicMessage
from mnsd.push.fanout import Fanout

logger = Logger(service="mns")
Job = Callable[[], object]


class Lanes:
    """Jobs in lanes: first in, first started within a lane, at most `width` of a lane at once, with threads
    started on demand. A job that raises is run again after each of `retry_seconds` (as the stream retries
    a batch), then logged as an error."""

    def __init__(self, width: int, retry_seconds: Sequence[float], on_done: Callable[[], None]) -> None:
        self.width = width
        self.retry_seconds = tuple(retry_seconds)
        self._on_done = on_done
        self._waiting: dict[Hashable, deque[tuple[str, Job]]] = {}
        self._running: dict[Hashable, int] = {}
        self._lock = threading.Lock()

    def submit(self, lane: Hashable, label: str, job: Job) -> None:
        with self._lock:
            self._waiting.setdefault(lane, deque()).append((label, job))
            if self._running.get(lane, 0) >= self.width:
                return
            self._running[lane] = self._running.get(lane, 0) + 1
        threading.Thread(target=self._serve, args=(lane,), name="fanout", daemon=True).start()

    def _serve(self, lane: Hashable) -> None:
        while True:
            with self._lock:
                waiting = self._waiting.get(lane)
                if not waiting:
                    self._running[lane] -= 1
                    if not self._running[lane]:
                        del self._running[lane]
                        self._waiting.pop(lane, None)
                    return
                label, job = waiting.popleft()
            try:
                self._run(label, job)
            finally:
                self._on_done()

    def _run(self, label: str, job: Job) -> None:
        for pause in (*self.retry_seconds, None):
            try:
                job()
                return
            except Exception:
                if pause is None:
                    logger.exception("fan-out failed, retries exhausted", extra={"message_id": label})
                    return
                logger.warning("fan-out failed, retrying", extra={"message_id": label})
                time.sleep(pause)


class LocalDispatcher:
    """Publishing's `Dispatcher` in one process: a lane per topic finds the subscriptions (at most
    `per_topic` messages at once), a lane per subscription makes its first attempts (at most
    `per_subscription` at once: an endpoint hanging 5 s per push keeps up with 3 pushes a second)."""

    def __init__(
        self,
        fanout: Callable[[], Fanout],
        per_topic: int = 4,
        per_subscription: int = 16,
        retry_seconds: Sequence[float] = (0.5, 2.0, 8.0),
    ) -> None:
        self.fanout = fanout
        self._pending = 0
        self._idle = threading.Condition()
        self._topics = Lanes(per_topic, retry_seconds, self._finished)
        self._subscriptions = Lanes(per_subscription, retry_seconds, self._finished)

    def submit(self, message: TopicMessage) -> None:
        self._started()
        lane = (message.account_id, message.topic_name)
        self._topics.submit(lane, message.message_id, lambda: self._fan_out(message))

    def _fan_out(self, message: TopicMessage) -> None:
        for subscription in self.fanout().subscriptions(message):
            self._started()
            self._subscriptions.submit(
                (subscription.account_id, subscription.topic_name, subscription.name),
                message.message_id,
                lambda s=subscription: self._attempt(s, message),  # type: ignore[misc]
            )

    def _attempt(self, subscription: Subscription, message: TopicMessage) -> None:
        self.fanout().first_attempt.attempt(subscription, message)

    def _started(self) -> None:
        with self._idle:
            self._pending += 1

    def _finished(self) -> None:
        with self._idle:
            self._pending -= 1
            self._idle.notify_all()

    def drain(self, timeout: float = 10.0) -> bool:
        """Wait until every submitted fan-out and attempt has finished (tests)."""
        with self._idle:
            return self._idle.wait_for(lambda: self._pending == 0, timeout)
