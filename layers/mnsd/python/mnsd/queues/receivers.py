"""A queue's receivers (EMQ's "multiple receivers"): each receives every message sent to the queue, on its own.

A receiver is its own incarnation of the queue's messages in the message store (`Receiver.queue_id`, made as a
queue's is), kept on its queue's record (at most `MAX_RECEIVERS`); deleting the queue deletes them, and their
messages are left to TTL as the queue's are. A send stores, in the same `MessageStore.put`, the queue's messages and
one copy of each per receiver (`ReceiverService.copies`, `QueueKind.copied`): its own id, the same content, delay, place in queue order
and end of retention. So a receiver has its own leases: visibility, receive counts, dead letters and counts are its
own, and the queue keeps working as its own receiver. A FIFO queue's receiver numbers each group's copies from its
own counters (`ReceiverService.copies`), so it keeps every group's order on its own, as the queue does: a group in
flight in one receiver holds nothing back in the queue or another receiver.

A receiver is reached through the queue routes by its address `{queue}.{receiver}` (`mnsd.model.names`), as a `Queue`
(`view`): its incarnation, the queue's attributes with its own VisibilityTimeout, PollingWaitSeconds and DlqPolicy
where it sets them, named by its address (so ARNs and the DLQSourceArn of its dead letters name it).

A receiver starts when it is created: the messages sent from then on are copied to it as they are sent. One given an
earlier StartTime (within the queue's retention) also gets a copy of each message of the queue enqueued since then
that the store still holds, receivable, in flight or kept for rewind (`StandardMessageStore.enqueued_since`); one deleted
from the queue without rewind is gone. They are copied page by page, each page claimed by advancing the receiver's
`copy_cursor` on the queue's record before it is written, so two callers never copy one page twice; a create copies
at most `COPY_PER_CALL` messages (or for `COPY_SECONDS`), and an identical create goes on from there (`ReceiverState.copying`).
"""

from __future__ import annotations

import dataclasses
import secrets
from collections.abc import Callable
from dataclasses import dataclass

from mnsd.control.catalog import Catalog
from mnsd.control.registry import Registry
from mnsd.ground import errors
from mnsd.ground.clock import Clock, ms
from mnsd.ground.validation import int_in_range, strict_int
from mnsd.model.kinds import STANDARD, kind_of
from mnsd.model.messages import Message
from mnsd.model.names import check_queue_name, check_receiver_address, check_receiver_name, receiver_address
from mnsd.model.queues import (
    INT_ATTRIBUTES,
    DlqPolicyInput,
    Queue,
    QueueAttributeChanges,
    QueueCounts,
    Receiver,
    dlq_policy,
)
from mnsd.queues.dlq_targets import DeadLetterTargets
from mnsd.queues.notifier import Notifier
from mnsd.queues.stores import MessageStores

MAX_RECEIVERS = 16  # per queue
COPY_PAGE = 500  # messages copied per page of an earlier StartTime
COPY_PER_CALL = 5000  # messages one create copies at most (an identical create goes on)
COPY_SECONDS = 4.0  # and for this long at most (within the shortest function timeout, 10 s)
ATTEMPTS = 3  # conditional writes of a queue's receivers tried before giving up (others changed them meanwhile)
SETTABLE = "Only VisibilityTimeout, PollingWaitSeconds and DlqPolicy can be set on a receiver."


@dataclass(frozen=True)
class ReceiverInput:
    """A `<Receiver>` as a request gives it: the text of each element, None where absent."""

    start_time: str | None = None
    visibility_timeout: str | None = None
    polling_wait_seconds: str | None = None
    dlq_policy: DlqPolicyInput | None = None


@dataclass(frozen=True)
class ReceiverState:
    """A receiver as its answers show it: its record, itself as a queue (the attributes it has), its counts."""

    receiver: Receiver
    queue: Queue  # `view`
    counts: QueueCounts

    @property
    def copying(self) -> bool:
        """Whether messages enqueued before its creation (an earlier StartTime) are still to be copied."""
        return self.receiver.copy_cursor is not None


def view(queue: Queue, receiver: Receiver) -> Queue:
    """A receiver as a queue: its incarnation and address, the queue's attributes with its own where it sets them."""
    a = queue.attributes
    own_dlq = receiver.dlq_target is not None
    attributes = dataclasses.replace(
        a,
        visibility_timeout=a.visibility_timeout if receiver.visibility_timeout is None else receiver.visibility_timeout,
        polling_wait_seconds=(
            a.polling_wait_seconds if receiver.polling_wait_seconds is None else receiver.polling_wait_seconds
        ),
        dlq_target=(receiver.dlq_target or "") if own_dlq else a.dlq_target,
        dlq_max_receive_count=receiver.dlq_max_receive_count if own_dlq else a.dlq_max_receive_count,
    )
    return Queue(
        queue.account_id,
        receiver_address(queue.name, receiver.name),
        receiver.queue_id,
        attributes,
        receiver.create_time_ms // 1000,
        max(queue.last_modify_time, receiver.last_modify_time),
    )


def _int_setting(field: str, text: str | None) -> int | None:
    """A receiver's VisibilityTimeout or PollingWaitSeconds as given, checked against the queue attribute's range."""
    if text is None:
        return None
    attribute = next(a for a in INT_ATTRIBUTES if a.field == field)
    return int_in_range(attribute.element, text, attribute.low, attribute.high, attribute.unit)


def with_settings(receiver: Receiver, given: ReceiverInput) -> Receiver:
    """The receiver with the attributes given set (checked); the others as they were."""
    visibility = _int_setting("visibility_timeout", given.visibility_timeout)
    polling = _int_setting("polling_wait_seconds", given.polling_wait_seconds)
    changed = dataclasses.replace(
        receiver,
        visibility_timeout=receiver.visibility_timeout if visibility is None else visibility,
        polling_wait_seconds=receiver.polling_wait_seconds if polling is None else polling,
    )
    if given.dlq_policy is None:
        return changed
    policy = dlq_policy(given.dlq_policy)
    return dataclasses.replace(
        changed,
        dlq_target=policy.target if policy else "",
        dlq_max_receive_count=policy.max_receive_count if policy else 0,
    )


def _settings(receiver: Receiver) -> tuple[int | None, int | None, str | None, int]:
    return (
        receiver.visibility_timeout,
        receiver.polling_wait_seconds,
        receiver.dlq_target,
        receiver.dlq_max_receive_count,
    )


def _named(queue: Queue, name: str) -> Receiver | None:
    return next((r for r in queue.receivers if r.name == name), None)


def _replaced(queue: Queue, receiver: Receiver) -> tuple[Receiver, ...]:
    return tuple(receiver if r.name == receiver.name else r for r in queue.receivers)


@dataclass(eq=False, kw_only=True)  # a service: compared by identity
class ReceiverService:
    catalog: Catalog
    messages: MessageStores  # a receiver's store is its queue's: `messages.of(queue)`
    clock: Clock
    notifier: Notifier
    registry: Registry[Queue]  # the queues' records
    dlq_targets: DeadLetterTargets

    # --- reaching a receiver through the queue routes -------------------------------------------

    def resolve(self, account_id: str, address: str) -> Queue:
        """The receiver an address names, as a queue (`view`): QueueNotExist or ReceiverNotExist if there is none."""
        queue_name, name = check_receiver_address(address)
        queue = self.registry.get(account_id, queue_name)
        receiver = _named(queue, name)
        if receiver is None:  # (created since this container read the queue?)
            queue = self._fresh(account_id, queue_name)
            receiver = _named(queue, name)
        if receiver is None:
            raise errors.ReceiverNotExist()
        return view(queue, receiver)

    def find(self, account_id: str, address: str) -> Queue | None:
        """The receiver an address names, as a queue, or None."""
        try:
            return self.resolve(account_id, address)
        except errors.MnsError:
            return None

    def _fresh(self, account_id: str, queue_name: str) -> Queue:
        """The queue as its record is now (not as cached): what a change of its receivers starts from."""
        check_queue_name(queue_name)
        queue = self.catalog.get_queue(account_id, queue_name, fresh=True)
        if queue is None:
            raise errors.QueueNotExist()
        return queue

    def _change(
        self, account_id: str, queue_name: str, change: Callable[[Queue], tuple[Receiver, ...] | None]
    ) -> Queue:
        """The queue whose receivers `change(queue)` gave (None: no change wanted), written if it gave some, as the
        queue was when they were written (read again when its receivers changed meanwhile)."""
        for _ in range(ATTEMPTS):
            queue = self._fresh(account_id, queue_name)
            receivers = change(queue)
            if receivers is None or self.catalog.set_receivers(queue, receivers):
                return queue
        raise errors.InternalError("The receivers of the queue are changing; try again.")

    # --- the receivers of a queue ----------------------------------------------------------------

    def create(self, account_id: str, queue_name: str, name: str, given: ReceiverInput) -> tuple[bool, bool]:
        """Create a receiver: (created, still copying). An identical one (same attributes, and the StartTime it has
        if one is given) is not created again, and goes on copying; one that differs is ReceiverAlreadyExist."""
        check_receiver_name(name)
        now = self.clock.now()
        created = False

        def add(queue: Queue) -> tuple[Receiver, ...] | None:
            nonlocal created
            start = self._start_time(queue, given.start_time, now)
            existing = _named(queue, name)
            if existing is not None:
                same_start = given.start_time is None or start == existing.start_time
                if not same_start or _settings(with_settings(existing, given)) != _settings(existing):
                    raise errors.ReceiverAlreadyExist()
                created = False
                return None
            earlier = kind_of(queue).receiver_start(start, now) and given.start_time is not None
            if len(queue.receivers) >= MAX_RECEIVERS:
                raise errors.ReceiverNumExceededLimit()
            receiver = self._new(queue, name, given, earlier, start, now)
            created = True
            return (*queue.receivers, receiver)

        self._change(account_id, queue_name, add)
        return created, self._copy_earlier(account_id, queue_name, name)

    def _start_time(self, queue: Queue, text: str | None, now: float) -> int:
        """The StartTime given (Unix seconds, within the queue's retention up to now), else now."""
        if text is None:
            return int(now)
        high = int(now)
        low = high - queue.attributes.message_retention_period
        start = strict_int(text.strip())
        if start is None or not low <= start <= high:
            raise errors.out_of_range("StartTime", low, high, "seconds")
        return start

    def _new(self, queue: Queue, name: str, given: ReceiverInput, earlier: bool, start: int, now: float) -> Receiver:
        """A new receiver of the queue (its attributes checked), its incarnation mapped to its address; `earlier`:
        it copies the messages enqueued from its StartTime on (else it starts now, to the millisecond)."""
        receiver = Receiver(
            name, secrets.token_urlsafe(12), ms(now), start, int(now), copy_cursor="" if earlier else None
        )
        receiver = with_settings(receiver, given)
        if given.dlq_policy is not None:
            self._check_dlq(queue, receiver)
        self.catalog.add_receiver_id(queue.account_id, receiver_address(queue.name, name), receiver.queue_id)
        return receiver

    def _check_dlq(self, queue: Queue, receiver: Receiver) -> None:
        """A receiver's own DlqPolicy targets another queue of the account, existing now (not the receiver's own:
        a dead letter sent there would come back to every receiver of it)."""
        policy = view(queue, receiver).attributes.dlq_policy if receiver.dlq_target else None
        self.dlq_targets.check(queue.account_id, queue.name, policy, kind_of(queue))

    def get(self, account_id: str, queue_name: str, name: str) -> ReceiverState:
        check_receiver_name(name)
        queue = self._fresh(account_id, queue_name)
        receiver = _named(queue, name)
        if receiver is None:
            raise errors.ReceiverNotExist()
        return self._state(queue, receiver)

    def receivers_of(self, account_id: str, queue_name: str) -> list[ReceiverState]:
        """Every receiver of the queue, in the order they were created."""
        queue = self._fresh(account_id, queue_name)
        return [self._state(queue, receiver) for receiver in queue.receivers]

    def _state(self, queue: Queue, receiver: Receiver) -> ReceiverState:
        counts = self.messages.of(queue).counts(receiver.queue_id, ms(self.clock.now()))
        return ReceiverState(receiver, view(queue, receiver), counts)

    def delete(self, account_id: str, queue_name: str, name: str) -> None:
        """Forget a receiver (deleting a missing one succeeds); its messages are left to TTL."""
        check_receiver_name(name)

        def remove(queue: Queue) -> tuple[Receiver, ...] | None:
            if _named(queue, name) is None:
                return None
            return tuple(r for r in queue.receivers if r.name != name)

        self._change(account_id, queue_name, remove)

    def set_attributes(self, account_id: str, address: str, given: QueueAttributeChanges) -> None:
        """SetQueueAttributes on a receiver's address: its VisibilityTimeout, PollingWaitSeconds and DlqPolicy."""
        others = dataclasses.replace(given, visibility_timeout=None, polling_wait_seconds=None, dlq_policy=None)
        if others != QueueAttributeChanges():
            raise errors.InvalidArgument(SETTABLE)
        queue_name, name = check_receiver_address(address)
        settings = ReceiverInput(None, given.visibility_timeout, given.polling_wait_seconds, given.dlq_policy)

        def change(queue: Queue) -> tuple[Receiver, ...]:
            receiver = _named(queue, name)
            if receiver is None:
                raise errors.ReceiverNotExist()
            changed = dataclasses.replace(with_settings(receiver, settings), last_modify_time=int(self.clock.now()))
            if given.dlq_policy is not None:
                self._check_dlq(queue, changed)
            return _replaced(queue, changed)

        self._change(account_id, queue_name, change)

    # --- their messages ------------------------------------------------------------------------

    def copies(self, queue: Queue, originals: list[Message], now_ms: int) -> dict[str, list[Message]]:
        """Each receiver's copy of each new message of the queue, by the message's id."""
        found: dict[str, list[Message]] = {m.message_id: [] for m in originals}
        kind = kind_of(queue)
        for receiver in queue.receivers:
            ids = self.messages.of(queue).new_ids(receiver.queue_id, len(originals), now_ms)
            # (a FIFO queue's receiver places them by its own group counters, so it keeps every group's order itself)
            copies = kind.placed(
                [kind.copied(m, receiver.queue_id, id_) for m, id_ in zip(originals, ids, strict=True)],
                self.messages.counter(receiver.queue_id, now_ms),
            )
            for message, copy in zip(originals, copies, strict=True):
                found[message.message_id].append(copy)
        return found

    def notify(self, queue: Queue) -> None:
        """Messages were stored for the queue's receivers: wake their long polls."""
        for receiver in queue.receivers:
            self.notifier.notify(receiver.queue_id)

    def drop_kept(self, queue: Queue, now_ms: int) -> None:
        """The queue's rewind was turned off: what its receivers kept goes too."""
        for receiver in queue.receivers:
            self.messages.of(queue).drop_kept(receiver.queue_id, now_ms)

    def _copy_earlier(self, account_id: str, queue_name: str, name: str) -> bool:
        """Copy to the receiver the queue's messages enqueued from its StartTime to its creation, page by page, up to
        `COPY_PER_CALL` of them; whether some are still to be copied."""
        copied = 0
        deadline = self.clock.now() + COPY_SECONDS
        for _ in range(COPY_PER_CALL // COPY_PAGE + ATTEMPTS):
            if copied >= COPY_PER_CALL or self.clock.now() > deadline:
                break
            queue = self._fresh(account_id, queue_name)
            receiver = _named(queue, name)
            if receiver is None or receiver.copy_cursor is None:
                return False
            now_ms = ms(self.clock.now())
            since, until = receiver.start_time * 1000, receiver.create_time_ms
            store = self.messages.standard  # (a FIFO queue's receivers start when created: nothing to copy)
            page, cursor = store.enqueued_since(
                queue.queue_id, since, until, now_ms, receiver.copy_cursor or None, COPY_PAGE
            )
            if not self.catalog.set_receivers(
                queue, _replaced(queue, dataclasses.replace(receiver, copy_cursor=cursor))
            ):
                continue  # another caller took this page (or the receivers changed): read them again
            ids = store.new_ids(receiver.queue_id, len(page), now_ms)
            copies = [STANDARD.copied(m, receiver.queue_id, id_) for m, id_ in zip(page, ids, strict=True)]
            if store.put(copies):
                raise errors.InternalError()
            if copies:
                self.notifier.notify(receiver.queue_id)
            copied += len(copies)
            if cursor is None:
                return False
        return True
