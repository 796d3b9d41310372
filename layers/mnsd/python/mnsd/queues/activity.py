"""What a queue's calls count (`mnsd.metrics`), said in the queue's words: the queue service tells it what happened.

A queue is counted under its name, a receiver under its address (`{queue}.{receiver}`). A message sent to a queue is
sent to each of its receivers too (a copy is stored for each): it is counted at every address. A dead letter is no
message sent (as in SQS): it is counted as dead-lettered, on the queue it leaves.

A queue's calls are counted only where the sink monitors it (`MetricsSink.monitors`: on AWS, the queue's choice,
`QueueAttributes.metrics_chosen`, or the stack's default), decided from the queue record the service already holds:
no read is added. Its receivers follow the queue's choice.
"""

from __future__ import annotations

from mnsd.metrics import (
    EMPTY_RECEIVES,
    MESSAGES_DEAD_LETTERED,
    MESSAGES_DELETED,
    MESSAGES_RECEIVED,
    MESSAGES_SENT,
    QPS_LIMIT_EXCEEDED,
    SENT_MESSAGE_SIZE,
    Metric,
    MetricsSink,
    queue_labels,
)
from mnsd.model.messages import Message
from mnsd.model.names import receiver_address
from mnsd.model.queues import Queue


class QueueActivity:
    def __init__(self, sink: MetricsSink) -> None:
        self.sink = sink

    def _monitors(self, queue: Queue) -> bool:
        return self.sink.monitors(queue.attributes.metrics_chosen)

    def _count(self, metric: Metric, queue: Queue, value: float = 1) -> None:
        if value and self._monitors(queue):
            self.sink.add(metric, queue_labels(queue.account_id, queue.name), value)

    def sent(self, queue: Queue, stored: list[Message]) -> None:
        """Messages stored by a send (not those it failed to store), at the queue's and each receiver's address."""
        if not stored or not self._monitors(queue):
            return
        sizes = [len((m.body or "").encode("utf-8")) for m in stored]
        for name in (queue.name, *(receiver_address(queue.name, r.name) for r in queue.receivers)):
            labels = queue_labels(queue.account_id, name)
            self.sink.add(MESSAGES_SENT, labels, len(sizes))
            for size in sizes:
                self.sink.add(SENT_MESSAGE_SIZE, labels, size)

    def received(self, queue: Queue, count: int) -> None:
        self._count(MESSAGES_RECEIVED, queue, count)

    def empty_receive(self, queue: Queue) -> None:
        self._count(EMPTY_RECEIVES, queue)

    def deleted(self, queue: Queue, count: int) -> None:
        self._count(MESSAGES_DELETED, queue, count)

    def dead_lettered(self, queue: Queue, count: int) -> None:
        self._count(MESSAGES_DEAD_LETTERED, queue, count)

    def refused_receive(self, queue: Queue) -> None:
        """A receive refused by the queue's QPS limit (`TenantRateLimitPolicy`)."""
        self._count(QPS_LIMIT_EXCEEDED, queue)
