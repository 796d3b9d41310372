"""Messages of a queue (or of a receiver, as its address resolves to one: `mnsd.queues.addresses`): send, the
long-poll receive, peek, delete and change of visibility, each given the `Queue` resolved at the edge."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from mnsd.control.limits import Limits
from mnsd.ground import actor, deadlines, errors
from mnsd.ground.clock import Clock, ms
from mnsd.ground.settings import Settings
from mnsd.model.inputs import MessageInput, VisibilityChange
from mnsd.model.kinds import kind_of
from mnsd.model.messages import Message, MessageRef
from mnsd.model.queues import Queue
from mnsd.queues.activity import QueueActivity
from mnsd.queues.arrivals import Arrivals
from mnsd.queues.dead_letters import DeadLetterService
from mnsd.queues.notifier import Notifier, wake
from mnsd.queues.receipts import Receipt, ReceiptCodec
from mnsd.queues.stores import MessageStores

MAX_WAIT_SECONDS = 30
CLAIM_ROUNDS = 10
# What fails one receipt handle of a batch (delete, change of visibility) on its own, the others going on.
HANDLE_ERRORS = (errors.MessageNotExist, errors.ReceiptHandleError, errors.MissingReceiptHandle)


@dataclass(frozen=True)
class SendResult:
    message: Message
    receipt_handle: str | None  # only for delayed messages: lets the sender delete or re-time them
    error: errors.MnsError | None = None


@dataclass(frozen=True)
class VisibilityResult:
    """One handle of a batch ChangeMessageVisibility: its new receipt handle and NextVisibleTime, or its error."""

    given: str  # the receipt handle the request gave
    receipt_handle: str = ""
    next_visible_time: int = 0
    error: errors.MnsError | None = None


@dataclass(frozen=True)
class Received:
    message: Message
    receipt_handle: str


@dataclass(frozen=True, slots=True)
class Claimed:
    """A receive through the wait tier that claimed: its messages, how many more receivable ones it saw and left
    (the tier wakes as many held receives), and when the first claimed lease ends (a receive is woken then)."""

    received: list[Received]
    more: int
    due_ms: int


@dataclass(frozen=True, slots=True)
class Hold:
    """A receive through the wait tier that found nothing receivable: its client waits until `until_ms` (past it,
    the tier answers at once), unless a wake comes first; `due_ms`, when a delayed or invisible message becomes
    receivable before then (the tier wakes a receive at that time)."""

    until_ms: int
    due_ms: int | None


@dataclass(frozen=True, slots=True)
class Ask:
    """A single receive through the wait tier: its client's wait, when it reached the origin, and its deadline when
    the tier asks again for a receive it holds (`MessageService.receive_or_hold`)."""

    wait_seconds: int | None
    received_at: float | None
    deadline_ms: int | None


@dataclass(eq=False, kw_only=True)  # a service: compared by identity
class MessageService:
    messages: MessageStores  # a queue's store: `messages.of(queue)`
    receipts: ReceiptCodec
    clock: Clock
    settings: Settings
    notifier: Notifier  # wakes long polls (`PollingNotifier`: none, they poll)
    arrivals: Arrivals
    dead_letters: DeadLetterService
    activity: QueueActivity
    limits: Limits | None = None

    def check_sent(self, queue: Queue, inputs: list[MessageInput]) -> None:
        """Whether the queue takes these messages (their size, what its kind refuses): the error, else nothing."""
        limit, kind = queue.attributes.maximum_message_size, kind_of(queue)
        for message in inputs:
            if len(message.body.encode("utf-8")) > limit:
                raise errors.InvalidArgument("The length of message should not be larger than MaximumMessageSize.")
            kind.check_sent(message)

    def send(self, queue: Queue, inputs: list[MessageInput]) -> list[SendResult]:
        """Store messages, and each receiver's copies; every message is validated before any is written."""
        self.check_sent(queue, inputs)
        now_ms = ms(self.clock.now())
        groups = [m.message_group_id for m in inputs]
        ids = self.messages.of(queue).new_ids(queue.queue_id, len(inputs), now_ms, groups)
        stored = self.arrivals.new_messages(queue, inputs, now_ms, ids)
        with actor.recording(queue.attributes.logging_enabled):
            failed = self.arrivals.store(queue, stored, now_ms)
        return [
            SendResult(
                message,
                self._handle(message) if message.visible_at > now_ms else None,
                errors.ServiceUnavailable() if message.message_id in failed else None,  # (throttled: retryable)
            )
            for message in stored
        ]

    def _handle(self, message: Message) -> str:
        return self.receipts.encode(Receipt(message.queue_id, message.ref.key, message.version, message.visible_at))

    def receive(
        self, queue: Queue, count: int, wait_seconds: int | None, received_at: float | None = None
    ) -> list[Received]:
        """Claim up to `count` Active messages, long-polling until one is receivable or the wait ends.

        The wait counts from `received_at`, when the request reached the API (a cold start's init and
        secret reads included), and no claim starts later than `max_poll_seconds` after it: API
        Gateway gives up on the request 30 s after it arrived, and a message claimed then would stay
        invisible behind its 504.
        """
        self._admit(queue)
        received = self._poll(queue, count, wait_seconds, received_at)
        if not received:
            self.activity.empty_receive(queue)
            raise errors.MessageNotExist()
        self.activity.received(queue, len(received))
        return received

    def receive_or_hold(
        self, queue: Queue, count: int, wait_seconds: int | None, received_at: float | None, deadline_ms: int | None
    ) -> Claimed | Hold:
        """A receive through the wait tier (`mnsd.waiting`): what it claims now, or how long the tier holds it.

        The client stops waiting `wait_seconds` after it first arrived (`deadline_ms` when the tier asks again for
        a receive it holds), and never later than `deadlines.HOLD_SECONDS` after it: the tier answers a hold's end
        itself, without a claim (it asks again no later than the last claim `receive` allows)."""
        self._admit(queue)
        received, more, next_visible = self._claim_rounds(queue, count)
        if received:
            self.activity.received(queue, len(received))
            return Claimed(received, more, min(r.message.visible_at for r in received))
        return self._hold(queue, Ask(wait_seconds, received_at, deadline_ms), next_visible)

    def receive_each(self, queue: Queue, asks: list[Ask]) -> list[Claimed | Hold | errors.MnsError]:
        """Single receives through the wait tier that came together (`mnsd.request.coalesced`), claimed as one batch
        receive: each admitted one gets one message while they last (in order), the others their own hold; one the
        queue's receive limit refuses gets its error. On a queue whose kind does not share a claim (FIFO), each
        receive claims alone, in order, as if it had come alone."""
        if len(asks) > 1 and not kind_of(queue).shares_claims:
            return [outcome for ask in asks for outcome in self.receive_each(queue, [ask])]
        outcomes: list[Claimed | Hold | errors.MnsError] = []
        for _ in asks:
            try:
                self._admit(queue)
                outcomes.append(Hold(0, None))  # (a place: filled below)
            except errors.QpsLimitExceeded as error:
                outcomes.append(error)
        admitted = [i for i, outcome in enumerate(outcomes) if not isinstance(outcome, errors.MnsError)]
        if not admitted:
            return outcomes
        received, more, next_visible = self._claim_rounds(queue, len(admitted))
        if received:
            self.activity.received(queue, len(received))
        for n, index in enumerate(admitted):
            if n < len(received):  # (the first says what was left: the tier wakes as many held receives once)
                outcomes[index] = Claimed([received[n]], more if n == 0 else 0, received[n].message.visible_at)
            else:
                outcomes[index] = self._hold(queue, asks[index], next_visible)
        return outcomes

    def _claim_rounds(self, queue: Queue, count: int) -> tuple[list[Received], int, int | None]:
        """Up to `count` receivable messages claimed (rounds lost to other consumers: looking again at once), how
        many more receivable ones were seen and left, and the queue's next visible time when none was claimed."""
        for _ in range(CLAIM_ROUNDS + 1):
            received, candidates, next_visible = self._claim_ready(queue, count, self.clock.now())
            if received or not candidates:
                break
        return received, max(0, candidates - len(received)), next_visible

    def _hold(self, queue: Queue, ask: Ask, next_visible: int | None) -> Hold:
        """A receive through the tier that found nothing: held until its client stops waiting."""
        now = self.clock.now()
        wait = queue.attributes.polling_wait_seconds if ask.wait_seconds is None else ask.wait_seconds
        arrived = ms(now if ask.received_at is None else min(ask.received_at, now))
        until = ask.deadline_ms if ask.deadline_ms is not None else arrived + wait * 1000
        until = min(until, arrived + ms(deadlines.HOLD_SECONDS))
        if until <= ms(now):
            self.activity.empty_receive(queue)
        return Hold(until, next_visible if next_visible is not None and next_visible < until else None)

    def _admit(self, queue: Queue) -> None:
        if self.limits is not None:
            try:
                self.limits.admit_receive(queue.queue_id, queue.attributes.max_receives_per_second)
            except errors.QpsLimitExceeded:
                self.activity.refused_receive(queue)
                raise

    def _poll(self, queue: Queue, count: int, wait_seconds: int | None, received_at: float | None) -> list[Received]:
        """The messages claimed by a receive, waiting as `receive` says; none when the wait ended first."""
        wait = queue.attributes.polling_wait_seconds if wait_seconds is None else wait_seconds
        started = self.clock.now() if received_at is None else min(received_at, self.clock.now())
        last_claim = started + deadlines.last_claim_seconds(self.settings.max_poll_seconds)
        deadline = min(started + wait, last_claim)
        contended_rounds = 0
        while True:
            now = self.clock.now()
            if now > last_claim:
                return []
            received, candidates, next_visible = self._claim_ready(queue, count, now)
            if received:
                return received
            if candidates and contended_rounds < CLAIM_ROUNDS:
                contended_rounds += 1  # other consumers took what we saw: look again at once
                continue
            remaining = deadline - now
            if remaining <= 0:
                return []
            pause = min(remaining, self.settings.poll_interval_ms / 1000)
            if next_visible is not None:
                pause = min(pause, max(0.001, next_visible / 1000 - now))
            self.notifier.wait(queue.queue_id, pause)
            contended_rounds = 0

    def _claim_ready(self, queue: Queue, count: int, now: float) -> tuple[list[Received], int, int | None]:
        """One scan of the queue and its claim (the storage's writes recorded as the caller's when the queue logs):
        what it claimed, how many candidates it saw, and the queue's next visible time."""
        now_ms = ms(now)
        store = self.messages.of(queue)
        with actor.recording(queue.attributes.logging_enabled):
            scan = store.scan_ready(queue.queue_id, now_ms, count)  # (its candidates: `mnsd.model.ports.candidates`)
            candidates = kind_of(queue).candidates(scan.messages)
            seen = len(candidates)
            policy = queue.attributes.dlq_policy
            if policy is not None:
                candidates = self.dead_letters.at_receive(queue, policy, candidates, now_ms)
            visible_at = now_ms + queue.attributes.visibility_timeout * 1000
            claimed = scan.claim(candidates, count, now_ms, visible_at)
            store.load_bodies(claimed)
            return [Received(m, self._handle(m)) for m in claimed], seen, scan.next_visible_at

    def peek(self, queue: Queue, count: int) -> list[Message]:
        store = self.messages.of(queue)
        found = store.peek_ready(queue.queue_id, ms(self.clock.now()), count)
        store.load_bodies(found)
        found = [m for m in found if m.body is not None]  # (one deleted since it was read stays unloaded)
        if not found:
            raise errors.MessageNotExist()
        return found

    def _receipt(self, queue: Queue, handle: str | None, now_ms: int) -> tuple[Receipt, MessageRef]:
        receipt = self.receipts.decode(handle, queue.queue_id)
        try:
            ref = MessageRef.from_key(receipt.queue_id, receipt.key)
        except ValueError:
            raise errors.ReceiptHandleError() from None
        if receipt.visible_at <= now_ms:
            raise errors.MessageNotExist()
        return receipt, ref

    def delete(self, queue: Queue, handle: str | None) -> None:
        now_ms = ms(self.clock.now())
        receipt, ref = self._receipt(queue, handle, now_ms)
        if not self._delete_leases(queue, [(ref, receipt.version)], now_ms)[0]:
            raise errors.MessageNotExist()

    def _delete_leases(self, queue: Queue, leases: list[tuple[MessageRef, int]], now_ms: int) -> list[bool]:
        if queue.attributes.rewind_period:
            deleted = self.messages.of(queue).delete_keeping(leases, now_ms)
        else:
            deleted = self.messages.of(queue).delete_many(leases, now_ms)
        self.activity.deleted(queue, sum(deleted))
        return deleted

    def batch_delete(self, queue: Queue, handles: list[str]) -> list[tuple[str, errors.MnsError]]:
        """Delete each message (1 to `MAX_BATCH`: `mnsd.wire.requests.receipt_handles`); the handles that failed."""
        now_ms = ms(self.clock.now())
        outcomes: list[errors.MnsError | tuple[MessageRef, int]] = []
        for handle in handles:
            try:
                receipt, ref = self._receipt(queue, handle, now_ms)
                outcomes.append((ref, receipt.version))
            except HANDLE_ERRORS as exc:
                outcomes.append(exc)
        leases = [outcome for outcome in outcomes if isinstance(outcome, tuple)]
        deleted = iter(self._delete_leases(queue, leases, now_ms))
        failures: list[tuple[str, errors.MnsError]] = []
        for handle, outcome in zip(handles, outcomes, strict=True):
            if isinstance(outcome, errors.MnsError):
                failures.append((handle, outcome))
            elif not next(deleted):
                failures.append((handle, errors.MessageNotExist()))
        return failures

    def change_visibility(self, queue: Queue, handle: str | None, visibility_timeout: int) -> tuple[str, int]:
        """Move the next visible time of an Inactive message; its new receipt handle and NextVisibleTime."""
        now_ms = ms(self.clock.now())
        renewed, visible_at = self._retime(queue, handle, visibility_timeout, now_ms)
        wake(self.notifier, queue.queue_id, [visible_at], now_ms)  # (sooner than it was, maybe)
        return renewed, visible_at

    def batch_change_visibility(self, queue: Queue, changes: list[VisibilityChange]) -> list[VisibilityResult]:
        """Change each handle's visibility on its own (not atomic, as EMQ's batch: one failing leaves the others
        changed), by the rule of `change_visibility`; each handle's result, in the order given (1 to `MAX_BATCH`:
        `mnsd.model.inputs.visibility_batch`)."""
        now_ms = ms(self.clock.now())
        results: list[VisibilityResult] = []
        for change in changes:
            try:
                renewed, visible_at = self._retime(queue, change.receipt_handle, change.visibility_timeout, now_ms)
            except HANDLE_ERRORS as exc:
                results.append(VisibilityResult(change.receipt_handle, error=exc))
                continue
            results.append(VisibilityResult(change.receipt_handle, renewed, visible_at))
        wake(self.notifier, queue.queue_id, [r.next_visible_time for r in results if r.error is None], now_ms)
        return results

    def _retime(self, queue: Queue, handle: str | None, visibility_timeout: int, now_ms: int) -> tuple[str, int]:
        """One message's next visible time moved (MessageNotExist if its handle is stale): its new handle and time."""
        receipt, ref = self._receipt(queue, handle, now_ms)
        visible_at = now_ms + visibility_timeout * 1000
        with actor.recording(queue.attributes.logging_enabled):
            changed = self.messages.of(queue).change_visibility(ref, receipt.version, now_ms, visible_at)
        if not changed:
            raise errors.MessageNotExist()
        renewed = dataclasses.replace(receipt, version=receipt.version + 1, visible_at=visible_at)
        return self.receipts.encode(renewed), visible_at
