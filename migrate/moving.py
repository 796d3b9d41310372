"""`drain` and `bridge`: a queue's waiting messages received from the source in batches, sent to the target's queue of
the same name in the order received (body text, priority, group and user properties kept; sent with no delay, since
a delayed message is received only once its delay is over), and deleted from the source only after the target
acknowledged them. A received batch is sent as the BatchSendMessage requests the service takes (`batching`: at most
16 messages and 64 KB of bodies each), one after another, each deleted from the source once acknowledged. At least
once: a message received again after its copy was acknowledged (the journal has it) is deleted without being sent
again; a batch sent again after an answer that never came may be on the target twice, and is counted as possible
duplicates."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

from migrate.batching import MOST_MESSAGES, send_batches
from migrate.journal import QueueJournal
from mnsclient.errors import NETWORK, ServiceError
from mnsclient.messages import Message, MessageClient
from mnsclient.retrying import FIRST_PAUSE, LONGEST_PAUSE, retrying

T = TypeVar("T")
SETTLE_PAUSE = 0.5
MOST_RETURNS = 3  # a copied message received again more often: its deletes are not taking


@dataclass
class Options:
    retry_seconds: float = 300.0  # how long a side may refuse or be unreachable before the queue's move stops
    settle_seconds: float = 120.0  # drain: how long to wait for delayed and in-flight messages to come back
    wait_seconds: int = 0  # each receive's long poll (drain: none, the counts tell when the queue is empty)
    continuous: bool = False  # bridge: go on until stopped


@dataclass
class QueueStats:
    queue: str
    waiting_at_start: int = 0
    moved: int = 0
    received_again: int = 0  # already copied: deleted from the source, not sent again
    possible_duplicates: int = 0  # sent again after the target's answer was lost
    retries: int = 0
    left_on_source: int = 0
    error: str = ""
    finished: bool = False


@dataclass
class QueueMove:
    queue: str
    source: MessageClient
    target: MessageClient
    journal: QueueJournal
    options: Options
    stop: threading.Event
    stats: QueueStats = field(init=False)
    returns: dict[str, int] = field(init=False, default_factory=dict)  # copied messages received again, this run

    def __post_init__(self) -> None:
        self.stats = QueueStats(self.queue)

    def _retry(self, error: ServiceError) -> None:
        self.stats.retries += 1

    def _source(self, call: Callable[[], T]) -> T:
        return retrying(call, self.options.retry_seconds, self._retry)

    def run(self) -> QueueStats:
        try:
            self.stats.waiting_at_start = sum(self._source(lambda: self.source.counts(self.queue)))
            self._loop()
        except ServiceError as error:
            self.stats.error = f"queue {self.queue}: the {error.answered_by or 'source'} answered {error}"
        finally:
            self.stats.finished = True
        return self.stats

    def _loop(self) -> None:
        quiet_since: float | None = None
        while not self.stop.is_set():
            messages = self._source(lambda: self.source.receive(self.queue, MOST_MESSAGES, self.options.wait_seconds))
            if messages:
                quiet_since = None
                self._move(messages)
                continue
            if self.options.continuous:
                continue
            waiting = sum(self._source(lambda: self.source.counts(self.queue)))
            if waiting == 0:
                return
            quiet_since = quiet_since or time.monotonic()
            if time.monotonic() - quiet_since > self.options.settle_seconds:
                self.stats.left_on_source = waiting
                return
            self.stop.wait(SETTLE_PAUSE)  # delayed or in-flight messages: they come back in a while
        if not self.options.continuous:
            self.stats.left_on_source = sum(self._source(lambda: self.source.counts(self.queue)))

    def _move(self, messages: list[Message]) -> None:
        again = [m for m in messages if m.message_id in self.journal]
        for message in again:
            self.returns[message.message_id] = self.returns.get(message.message_id, 0) + 1
            if self.returns[message.message_id] > MOST_RETURNS:
                raise ServiceError(
                    0,
                    "DeleteNotTaking",
                    f"message {message.message_id} came back {MOST_RETURNS} times after its copy was acknowledged "
                    "and its delete sent: the source's receives may outlast the queue's visibility timeout "
                    "(raise it for the move)",
                )
        self.stats.received_again += len(again)
        handles = [m.receipt_handle for m in again]
        for batch in send_batches([m for m in messages if m.message_id not in self.journal]):
            copied = self._send(batch)
            self.journal.add([m.message_id for m in copied])
            self.stats.moved += len(copied)
            self._delete(handles + [m.receipt_handle for m in copied])
            handles = []
        self._delete(handles)

    def _delete(self, handles: list[str]) -> None:
        """The source's copies of messages the target has (a handle that expired meanwhile: the message comes back
        and is deleted then, the journal has it)."""
        if handles:
            self._source(lambda: self.source.delete(self.queue, handles))

    def _send(self, messages: list[Message]) -> list[Message]:
        """The messages the target acknowledged; a refusal that waiting cannot fix is raised (the rest of the batch
        stays on the source)."""
        sent: list[Message] = []
        pending = messages
        deadline = time.monotonic() + self.options.retry_seconds
        pause = FIRST_PAUSE
        while pending:
            try:
                outcomes = self.target.send(self.queue, pending)
            except ServiceError as error:
                if not error.retryable or time.monotonic() + pause > deadline:
                    error.answered_by = "target"
                    raise
                if error.code == NETWORK:
                    self.stats.possible_duplicates += len(pending)
                self.stats.retries += 1
                time.sleep(pause)
                pause = min(pause * 2, LONGEST_PAUSE)
                continue
            refused = [(m, o) for m, o in zip(pending, outcomes, strict=True) if o is not None]
            sent += [m for m, o in zip(pending, outcomes, strict=True) if o is None]
            final = [(m, o) for m, o in refused if not o.retryable]
            if final:
                message, outcome = final[0]
                outcome.answered_by = "target"
                outcome.message = f"message {message.message_id}: {outcome.message}"
                self.journal.add([m.message_id for m in sent])
                self.stats.moved += len(sent)
                raise outcome
            pending = [m for m, _ in refused]
            if pending:
                self.stats.retries += 1
                time.sleep(pause)
        return sent
