"""The queue service: MNS queue and message semantics over the storage layer."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Iterator
from dataclasses import dataclass, field

from mnsd import errors
from mnsd.clock import Clock, ms
from mnsd.limits import Limits
from mnsd.metrics import MetricsSink, NoMetrics
from mnsd.names import check_queue_name, is_receiver_address
from mnsd.queues import fifo
from mnsd.queues.activity import QueueActivity
from mnsd.queues.model import (
    DLQ_SOURCE_ARN,
    DLQ_TYPE_QUEUE,
    MAX_BATCH,
    Backlog,
    Content,
    DlqPolicy,
    Message,
    MessageInput,
    MessageRef,
    Property,
    Queue,
    QueueAttributeChanges,
    QueueAttributes,
    QueueCounts,
    dead_letter_marks,
    queue_type,
    without_dead_letter_marks,
)
from mnsd.queues.notifier import Notifier
from mnsd.queues.receipts import Receipt, ReceiptCodec
from mnsd.queues.receivers import ReceiverService, view
from mnsd.registry import Registry
from mnsd.settings import Settings
from mnsd.storage import FifoMessageStore, MessageStore
from mnsd.storage.catalog import Catalog
from mnsd.validation import strict_int

MAX_WAIT_SECONDS = 30
VISIBILITY_RANGE = (0, 43200)
# How many Active messages a receive looks at per message it wants (and at least): consumers pick at
# random among them, so concurrent receives rarely race for the same lease. A page of 16 small index
# items costs what a page of 1 does (half a read unit).
CANDIDATES_PER_MESSAGE = 4
MIN_CANDIDATES = 16
MAX_CANDIDATES = 64
CLAIM_ROUNDS = 10
# A redrive moves at most this many messages per request (the answer says how many; call again for more)
# and looks at most this far into the dead-letter queue past the messages it cannot move.
MAX_REDRIVE = 1000
HELD_GROUPS_SHOWN = 1000  # GetQueueAttributes' MessageGroupsInFlight counts this many at most
# The group a FIFO queue puts a message without one in: a dead letter of a push given up, or of a standard queue.
DEAD_LETTER_GROUP = "dead-letters"
MAX_REDRIVE_SCAN = 1000
REDRIVE_PAGE = 64


@dataclass(frozen=True)
class SendResult:
    message: Message
    receipt_handle: str | None  # only for delayed messages: lets the sender delete or re-time them
    error: errors.MnsError | None = None


@dataclass(frozen=True)
class Received:
    message: Message
    receipt_handle: str


def _candidates(count: int) -> int:
    """How many Active messages a receive of `count` looks at."""
    return min(MAX_CANDIDATES, max(MIN_CANDIDATES, count * CANDIDATES_PER_MESSAGE))


@dataclass(eq=False)  # a service: compared by identity
class QueueService:
    catalog: Catalog
    messages: MessageStore  # standard queues' (and their receivers')
    receipts: ReceiptCodec
    clock: Clock
    settings: Settings
    notifier: Notifier  # wakes long polls (`PollingNotifier`: none, they poll)
    registry: Registry[Queue]  # the control-plane path queues and topics share
    limits: Limits | None = None
    metrics: MetricsSink = field(default_factory=NoMetrics)  # what the queues' calls count (`mnsd.metrics`)
    fifo_messages: FifoMessageStore = field(kw_only=True)  # FIFO queues'

    def __post_init__(self) -> None:
        self.list_queues = self.registry.list  # (account, prefix, limit, marker) -> (queues, next marker)
        self.activity = QueueActivity(self.metrics)
        # A queue's receivers, each reached here by its address as a queue of its own (`get_queue`).
        self.receivers = ReceiverService(
            self.catalog, self.messages, self.clock, self.notifier, self.registry, self._check_dlq_target
        )

    def messages_of(self, queue: Queue) -> MessageStore:
        """The store of a queue's messages, by its kind (`mnsd.storage`: FIFO queues' keep their groups' order)."""
        return self.fifo_messages if queue.attributes.fifo else self.messages

    # --- queues -------------------------------------------------------------------------------

    def create_queue(self, account_id: str, name: str, given: QueueAttributeChanges | None = None) -> bool:
        """Create a queue; False if an identical one already exists (QueueAlreadyExist if it differs). A receiver's
        address is no queue name: InvalidQueueName, as MNS answers a name with a '.'."""
        check_queue_name(name)
        given = given or QueueAttributeChanges()
        chosen = QueueAttributes(queue_type=queue_type(given.queue_type)) if given.queue_type else QueueAttributes()
        attributes = chosen.updated_from(given)
        self._check_dlq_target(account_id, name, attributes.dlq_policy, attributes.fifo)
        return self.registry.create(account_id, name, attributes)

    def get_queue(self, account_id: str, name: str) -> Queue:
        """The queue a name names, or the receiver an address names (`mnsd.queues.receivers.view`)."""
        if is_receiver_address(name):
            return self.receivers.resolve(account_id, name)
        return self.registry.get(account_id, name)

    def delete_queue(self, account_id: str, name: str) -> None:
        """Delete a queue and its receivers; their messages, unreachable from now on, are left to TTL."""
        _not_a_receiver(name, "Delete a receiver with DELETE /queues/{queue}/receivers/{receiver}.")
        self.registry.delete(account_id, name)

    def set_queue_attributes(self, account_id: str, name: str, given: QueueAttributeChanges) -> None:
        if is_receiver_address(name):
            self.receivers.set_attributes(account_id, name, given)
            return

        def changed(queue: Queue) -> QueueAttributes:
            attributes = queue.attributes.updated_from(given)
            if given.dlq_policy is not None:
                self._check_dlq_target(account_id, name, attributes.dlq_policy, attributes.fifo)
            return attributes

        before, after = self.registry.set_attributes(account_id, name, changed)
        if before.attributes.rewind_period and not after.attributes.rewind_period:
            # rewind off: what was kept goes
            self.messages_of(before).drop_kept(before.queue_id, ms(self.clock.now()))
            self.receivers.drop_kept(after, ms(self.clock.now()))

    def _check_dlq_target(self, account_id: str, name: str, policy: DlqPolicy | None, fifo: bool) -> None:
        """A DlqPolicy's target is another queue of the same account and QueueType, existing now (as in SQS: a FIFO
        queue's dead letters keep their groups, a standard queue's have none)."""
        if policy is None:
            return
        if policy.target == name:
            raise errors.InvalidArgument("The DeadLetterTargetQueue should not be the queue itself.")
        check_queue_name(policy.target)
        target = self.catalog.get_queue(account_id, policy.target)
        if target is None:
            raise errors.QueueNotExist()
        if target.attributes.fifo != fifo:
            raise errors.InvalidArgument("The DeadLetterTargetQueue should be of the queue's own QueueType.")

    def queue_counts(self, queue: Queue) -> QueueCounts:
        return self.messages_of(queue).counts(queue.queue_id, ms(self.clock.now()))

    def backlog(self, queue: Queue) -> Backlog:
        """The queue's counts and the enqueue time of its oldest message not delayed (the metrics' gauges)."""
        return self.messages_of(queue).backlog(queue.queue_id, ms(self.clock.now()))

    def every_queue(self) -> Iterator[Queue]:
        """Every queue of every account, each followed by its receivers (as `get_queue` gives them by address)."""
        for account_id in self.catalog.accounts_with_queues():
            for queue in self.catalog.every_queue(account_id):
                yield queue
                yield from (view(queue, receiver) for receiver in queue.receivers)

    def held_groups(self, queue: Queue) -> int:
        """How many of a FIFO queue's groups have a message in flight (up to `HELD_GROUPS_SHOWN`)."""
        return len(self.fifo_messages.held_groups(queue.queue_id, ms(self.clock.now()), HELD_GROUPS_SHOWN))

    # --- messages -----------------------------------------------------------------------------

    def send(self, account_id: str, name: str, inputs: list[MessageInput]) -> list[SendResult]:
        """Store messages, and each receiver's copies; every message is validated before any is written."""
        _not_a_receiver(name, "Send to the queue: each of its receivers gets every message sent to it.")
        queue = self.get_queue(account_id, name)
        limit = queue.attributes.maximum_message_size
        for message in inputs:
            if len(message.body.encode("utf-8")) > limit:
                raise errors.InvalidArgument("The length of message should not be larger than MaximumMessageSize.")
            if queue.attributes.fifo:
                message.check_ordered()
        now_ms = ms(self.clock.now())
        ids = self.messages_of(queue).new_ids(queue.queue_id, len(inputs), now_ms)
        positions = self._positions(queue, [m.message_group_id for m in inputs], now_ms)
        stored = [
            self._new_message(queue, message, now_ms, id_, position)
            for message, id_, position in zip(inputs, ids, positions, strict=True)
        ]
        failed = self._store(queue, stored, now_ms)
        return [
            SendResult(
                message,
                self._handle(message) if message.visible_at > now_ms else None,
                errors.InternalError() if message.message_id in failed else None,
            )
            for message in stored
        ]

    def _positions(self, queue: Queue, groups: list[str], now_ms: int) -> list[int | None]:
        """A FIFO queue's places for new messages of these groups, in the order given (None for another queue)."""
        if not queue.attributes.fifo:
            return [None] * len(groups)
        following = {
            group: self.fifo_messages.sequence(queue.queue_id, group, groups.count(group), now_ms)
            for group in dict.fromkeys(groups)
        }
        positions: list[int | None] = []
        for group in groups:
            positions.append(following[group])
            following[group] += 1
        return positions

    def _new_message(
        self, queue: Queue, message: MessageInput, now_ms: int, message_id: str, position: int | None = None
    ) -> Message:
        delay = queue.attributes.delay_seconds if message.delay_seconds is None else message.delay_seconds
        available = now_ms + delay * 1000
        content = Content(
            message.body_md5,
            message.body,
            message.priority,
            message.user_properties,
            message.system_properties,
            message.message_group_id,
            queue.attributes.logging_enabled,
            ordered=position is not None,
        )
        expires_at = now_ms // 1000 + queue.attributes.message_retention_period
        return Message.enqueued(queue.queue_id, message_id, now_ms, available, expires_at, content, position)

    def dead_letter_send(
        self,
        account_id: str,
        queue_name: str,
        body: str,
        user_properties: tuple[Property, ...],
        system_properties: tuple[Property, ...],
        group: str = DEAD_LETTER_GROUP,
    ) -> Message:
        """Store a dead letter (a message the service itself sends, with system properties) in a queue (in `group`
        there when it is a FIFO queue)."""
        queue = self.get_queue(account_id, queue_name)
        given = MessageInput(body, 0, 8, user_properties, system_properties, message_group_id=group)
        now_ms = ms(self.clock.now())
        (message_id,) = self.messages_of(queue).new_ids(queue.queue_id, 1, now_ms, sent=False)
        (position,) = self._positions(queue, [group], now_ms)
        message = self._new_message(queue, given, now_ms, message_id, position)
        if self._store(queue, [message], now_ms, sent=False):
            raise errors.InternalError()
        return message

    def _store(self, queue: Queue, messages: list[Message], now_ms: int, sent: bool = True) -> set[str]:
        """Store new messages of the queue and its receivers' copies of them in one `put`, and wake their long polls;
        the ids of the messages not stored, or whose copy was not (the sender is told to send them again)."""
        copies = self.receivers.copies(queue, messages, now_ms, sent)
        failed = self.messages_of(queue).put(messages + [copy for m in messages for copy in copies[m.message_id]])
        lost = {
            m.message_id for m in messages if {m.message_id, *(c.message_id for c in copies[m.message_id])} & failed
        }
        if len(lost) < len(messages):
            self.notifier.notify(queue.queue_id)
            self.receivers.notify(queue)
        if sent:  # (a dead letter is no message sent)
            self.activity.sent(queue, [m for m in messages if m.message_id not in lost])
        return lost

    def _handle(self, message: Message) -> str:
        return self.receipts.encode(Receipt(message.queue_id, message.ref.key, message.version, message.visible_at))

    def receive(
        self, account_id: str, name: str, count: int, wait_seconds: int | None, received_at: float | None = None
    ) -> list[Received]:
        """Claim up to `count` Active messages, long-polling until one is receivable or the wait ends.

        The wait counts from `received_at`, when the request reached the API (a cold start's init and
        secret reads included), and no claim starts later than `max_poll_seconds` after it: API
        Gateway gives up on the request 30 s after it arrived, and a message claimed then would stay
        invisible behind its 504.
        """
        queue = self.get_queue(account_id, name)
        if self.limits is not None:
            try:
                self.limits.admit_receive(queue.queue_id, queue.attributes.max_receives_per_second)
            except errors.QpsLimitExceeded:
                self.activity.refused_receive(queue)
                raise
        received = self._poll(queue, count, wait_seconds, received_at)
        if not received:
            self.activity.empty_receive(queue)
            raise errors.MessageNotExist()
        self.activity.received(queue, len(received))
        return received

    def _poll(self, queue: Queue, count: int, wait_seconds: int | None, received_at: float | None) -> list[Received]:
        """The messages claimed by a receive, waiting as `receive` says; none when the wait ended first."""
        wait = queue.attributes.polling_wait_seconds if wait_seconds is None else wait_seconds
        started = self.clock.now() if received_at is None else min(received_at, self.clock.now())
        last_claim = started + self.settings.max_poll_seconds
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
        now_ms = ms(now)
        fifo = queue.attributes.fifo
        scan = self.messages_of(queue).scan_ready(queue.queue_id, now_ms, _candidates(count), enough=count)
        # A FIFO queue's candidates are its groups' runs, in order; the others are taken by priority, at random.
        candidates = scan.messages if fifo else sorted(scan.messages, key=lambda m: (m.priority, random.random()))
        seen = len(candidates)
        policy = queue.attributes.dlq_policy
        if policy is not None and fifo:
            candidates = self._runs_after_dead_letters(queue, policy, candidates, now_ms)
        elif policy is not None and self._dead_letter(queue, policy, candidates, now_ms):
            candidates = [m for m in candidates if m.dequeue_count < policy.max_receive_count]
        visible_at = now_ms + queue.attributes.visibility_timeout * 1000
        claimed = scan.claim(candidates, count, now_ms, visible_at)
        self.messages_of(queue).load_bodies(claimed)
        return [Received(m, self._handle(m)) for m in claimed], seen, scan.next_visible_at

    # --- dead letters and rewind ----------------------------------------------------------------

    def _dead_letter(self, queue: Queue, policy: DlqPolicy, candidates: list[Message], now_ms: int) -> bool:
        """Move the candidates whose next receive would exceed MaxReceiveCount to the policy's target.

        False (nothing moved, the candidates stay receivable) when the target queue no longer exists.
        Each move is atomic and conditioned on the lease as observed: of concurrent receivers, one moves it.
        """
        spent = [m for m in candidates if m.dequeue_count >= policy.max_receive_count]
        if not spent:
            return False
        target = self.catalog.get_queue(queue.account_id, policy.target)
        if target is None:
            return False
        store = self.messages_of(queue)
        store.load_bodies(spent)
        spent = [m for m in spent if m.body is not None]  # (one gone since it was read stays unloaded)
        source_arn = self.queue_arn(queue)
        letters = [self._dead_letter_of(m, target, source_arn, now_ms) for m in spent]
        moved = [letter for m, letter in zip(spent, letters, strict=True) if store.move(m, now_ms, letter)]
        if moved:
            self.notifier.notify(target.queue_id)
            self._copy_to_receivers(target, moved, now_ms)
            self.activity.dead_lettered(queue, len(moved))
        return True

    def _runs_after_dead_letters(
        self, queue: Queue, policy: DlqPolicy, candidates: list[Message], now_ms: int
    ) -> list[Message]:
        """A FIFO queue's runs with their spent messages dealt with (`fifo.dead_letter_split`): a run's spent head
        moves to the policy's target, in order, and its group waits for a later receive; another run is cut before
        its first spent message. (The target gone, nothing moves and the runs stay whole, as a standard queue's
        candidates do.)"""
        if not any(fifo.spent(m, policy.max_receive_count) for m in candidates):
            return candidates
        splits = [fifo.dead_letter_split(run, policy.max_receive_count) for run in fifo.runs(candidates)]
        moves = [moved for moved, _ in splits if moved]
        if moves and not self._dead_letter_runs(queue, policy, moves, now_ms):
            return candidates
        return [message for _, kept in splits for message in kept]

    def _dead_letter_runs(self, queue: Queue, policy: DlqPolicy, heads: list[list[Message]], now_ms: int) -> bool:
        """Move each group's spent head messages to the policy's target in their order, a group's moves stopping
        at the first lost to another consumer; False when the target queue no longer exists."""
        target = self.catalog.get_queue(queue.account_id, policy.target)
        if target is None:
            return False
        source_arn = self.queue_arn(queue)
        store = self.messages_of(queue)
        moved: list[Message] = []
        for run in heads:
            store.load_bodies(run)
            for message in run:
                letter = self._dead_letter_of(message, target, source_arn, now_ms)
                if message.body is None or not store.move(message, now_ms, letter):
                    break
                moved.append(letter)
        if moved:
            self.notifier.notify(target.queue_id)
            self._copy_to_receivers(target, moved, now_ms)
            self.activity.dead_lettered(queue, len(moved))
        return True

    def _copy_to_receivers(self, queue: Queue, moved: list[Message], now_ms: int) -> None:
        """Messages moved into a queue (dead letters) reach its receivers too, as copies stored after the moves
        (a copy not stored is not retried: the move, which the receive needs, is done)."""
        if not queue.receivers:
            return
        copies = self.receivers.copies(queue, moved, now_ms, sent=False)
        self.messages_of(queue).put([copy for found in copies.values() for copy in found])
        self.receivers.notify(queue)

    def _moved(self, message: Message, target: Queue, now_ms: int, system_properties: tuple[Property, ...]) -> Message:
        """`message` as a new message of `target` (`Message.moved`): in its group's order there if it is FIFO."""
        (message_id,) = self.messages_of(target).new_ids(target.queue_id, 1, now_ms, sent=False)
        group = message.message_group_id or DEAD_LETTER_GROUP
        (position,) = self._positions(target, [group], now_ms)
        logging = target.attributes.logging_enabled
        moved = message.moved(target.queue_id, message_id, now_ms, system_properties, logging, position)
        return dataclasses.replace(moved, message_group_id=group) if position is not None else moved

    def queue_arn(self, queue: Queue) -> str:
        return f"acs:mns:{self.settings.region}:{queue.account_id}:queues/{queue.name}"

    def _dead_letter_of(self, message: Message, target: Queue, source_arn: str, now_ms: int) -> Message:
        """The dead letter of `message` in `target`: same body, priority, properties and end of retention."""
        marks = dead_letter_marks(DLQ_TYPE_QUEUE, source_arn, message.message_id)
        return self._moved(message, target, now_ms, without_dead_letter_marks(message.system_properties) + marks)

    def redrive(self, account_id: str, name: str) -> int:
        """Move the dead letters of a queue back to the queues they came from; how many moved.

        Each goes back as a new message of its source queue (the current one of that name in the same
        account), without the DLQ system properties, with its end of retention. Messages in flight, and
        those whose source queue no longer exists, stay. A dead letter of a receiver goes back to that receiver
        alone, and one of a queue to the queue alone: its receivers had their own copy of the message.
        """
        _not_a_receiver(name, "Redrive the queue: a receiver's messages are copies of the queue's.")
        queue = self.get_queue(account_id, name)
        now_ms = ms(self.clock.now())
        sources: dict[str, Queue | None] = {}
        stay: set[str] = set()
        store = self.messages_of(queue)
        moved = 0
        while moved < MAX_REDRIVE:
            wanted = min(MAX_REDRIVE_SCAN, len(stay) + REDRIVE_PAGE)
            found = [m for m in store.scan_ready(queue.queue_id, now_ms, wanted).messages if m.message_id not in stay]
            if not found:
                break
            store.load_bodies(found)
            for message in found[: MAX_REDRIVE - moved]:
                if message.body is not None and self._redrive_one(queue, message, sources, now_ms):
                    moved += 1
                else:
                    stay.add(message.message_id)
        return moved

    def _redrive_one(self, queue: Queue, message: Message, sources: dict[str, Queue | None], now_ms: int) -> bool:
        source = self._redrive_source(queue.account_id, message, sources)
        if source is None or source.queue_id == queue.queue_id:
            return False
        back = self._moved(message, source, now_ms, without_dead_letter_marks(message.system_properties))
        if not self.messages_of(queue).move(message, now_ms, back):
            return False
        self.notifier.notify(source.queue_id)
        return True

    def _redrive_source(self, account_id: str, message: Message, sources: dict[str, Queue | None]) -> Queue | None:
        arn = next((p.value for p in message.system_properties if p.name == DLQ_SOURCE_ARN), "")
        prefix = f"acs:mns:{self.settings.region}:{account_id}:queues/"
        if not arn.startswith(prefix):
            return None  # not a dead letter of this account's queues
        source = arn[len(prefix) :]
        if source not in sources:
            found = self.receivers.find if is_receiver_address(source) else self.catalog.get_queue
            sources[source] = found(account_id, source)
        return sources[source]

    def rewind(self, account_id: str, name: str, rewind_time: str) -> int:
        """Make every retained message enqueued at or after `rewind_time` (Unix seconds) receivable again."""
        since = strict_int(rewind_time)
        if since is None:
            raise errors.InvalidArgument("The value of rewindtime should be a time in Unix seconds.")
        queue = self.get_queue(account_id, name)
        period = queue.attributes.rewind_period
        if not period:
            raise errors.InvalidArgument("The queue's RewindPeriod is 0: rewind is off.")
        now = self.clock.now()
        low, high = int(now) - period, int(now)
        if not low <= since <= high:
            raise errors.out_of_range("rewindtime", low, high, "seconds")
        rewound = self.messages_of(queue).rewind(queue.queue_id, since * 1000, ms(now))
        if rewound:
            self.notifier.notify(queue.queue_id)
        return rewound

    def peek(self, account_id: str, name: str, count: int) -> list[Message]:
        queue = self.get_queue(account_id, name)
        store = self.messages_of(queue)
        found = store.scan_ready(queue.queue_id, ms(self.clock.now()), count).messages
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

    def delete(self, account_id: str, name: str, handle: str | None) -> None:
        queue = self.get_queue(account_id, name)
        self._delete(queue, handle)

    def _delete(self, queue: Queue, handle: str | None) -> None:
        now_ms = ms(self.clock.now())
        receipt, ref = self._receipt(queue, handle, now_ms)
        if not self._delete_leases(queue, [(ref, receipt.version)], now_ms)[0]:
            raise errors.MessageNotExist()

    def _delete_leases(self, queue: Queue, leases: list[tuple[MessageRef, int]], now_ms: int) -> list[bool]:
        if queue.attributes.rewind_period:
            deleted = self.messages_of(queue).delete_keeping(leases, now_ms)
        else:
            deleted = self.messages_of(queue).delete_many(leases, now_ms)
        self.activity.deleted(queue, sum(deleted))
        return deleted

    def batch_delete(self, account_id: str, name: str, handles: list[str]) -> list[tuple[str, errors.MnsError]]:
        """Delete each message; the handles that failed, with why."""
        if not 1 <= len(handles) <= MAX_BATCH:
            raise errors.InvalidArgument(f"The count of receipt handles should between 1 and {MAX_BATCH}.")
        queue = self.get_queue(account_id, name)
        now_ms = ms(self.clock.now())
        outcomes: list[errors.MnsError | tuple[MessageRef, int]] = []
        for handle in handles:
            try:
                receipt, ref = self._receipt(queue, handle, now_ms)
                outcomes.append((ref, receipt.version))
            except (errors.MessageNotExist, errors.ReceiptHandleError, errors.MissingReceiptHandle) as exc:
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

    def change_visibility(
        self, account_id: str, name: str, handle: str | None, visibility_timeout: int
    ) -> tuple[str, int]:
        """Move the next visible time of an Inactive message; its new receipt handle and NextVisibleTime."""
        queue = self.get_queue(account_id, name)
        now_ms = ms(self.clock.now())
        receipt, ref = self._receipt(queue, handle, now_ms)
        visible_at = now_ms + visibility_timeout * 1000
        if not self.messages_of(queue).change_visibility(ref, receipt.version, now_ms, visible_at):
            raise errors.MessageNotExist()
        renewed = dataclasses.replace(receipt, version=receipt.version + 1, visible_at=visible_at)
        return self.receipts.encode(renewed), visible_at


def _not_a_receiver(name: str, hint: str) -> None:
    """Refuse what only a queue's own name may be given to."""
    if is_receiver_address(name):
        raise errors.InvalidArgument(f"The operation is not supported on a receiver ({name}). {hint}")
