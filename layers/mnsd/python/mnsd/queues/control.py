"""Queue control: a queue's record (create, attributes, delete), its counts and the queues of every account."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from mnsd.control.catalog import Catalog
from mnsd.control.registry import Registry
from mnsd.ground.clock import Clock, ms
from mnsd.ground.settings import Settings
from mnsd.model.kinds import KINDS, kind_of
from mnsd.model.names import check_queue_name
from mnsd.model.queues import Backlog, Queue, QueueAttributeChanges, QueueAttributes, QueueCounts, queue_type
from mnsd.queues.dlq_targets import DeadLetterTargets
from mnsd.queues.receivers import ReceiverService, view
from mnsd.queues.stores import MessageStores

HELD_GROUPS_SHOWN = 1000  # GetQueueAttributes' MessageGroupsInFlight counts this many at most


@dataclass(eq=False, kw_only=True)  # a service: compared by identity
class QueueControl:
    catalog: Catalog
    messages: MessageStores  # a queue's store: `messages.of(queue)`
    clock: Clock
    settings: Settings
    registry: Registry[Queue]  # the control-plane path queues and topics share
    receivers: ReceiverService
    dlq_targets: DeadLetterTargets

    def __post_init__(self) -> None:
        self.list_queues = self.registry.list  # (account, prefix, limit, marker) -> (queues, next marker)

    def create_queue(self, account_id: str, name: str, given: QueueAttributeChanges | None = None) -> bool:
        """Create a queue; False if an identical one already exists (QueueAlreadyExist if it differs). A receiver's
        address is no queue name: InvalidQueueName, as MNS answers a name with a '.'."""
        check_queue_name(name)
        given = given or QueueAttributeChanges()
        chosen = QueueAttributes(queue_type=queue_type(given.queue_type)) if given.queue_type else QueueAttributes()
        attributes = chosen.updated_from(given)
        self.dlq_targets.check(account_id, name, attributes.dlq_policy, KINDS[attributes.queue_type])
        return self.registry.create(account_id, name, attributes)

    def get_queue(self, account_id: str, name: str) -> Queue:
        """The queue a name names (a receiver is reached by its address: `mnsd.queues.addresses`)."""
        return self.registry.get(account_id, name)

    def delete_queue(self, account_id: str, name: str) -> None:
        """Delete a queue and its receivers; their messages, unreachable from now on, are left to TTL."""
        self.registry.delete(account_id, name)

    def set_queue_attributes(self, account_id: str, name: str, given: QueueAttributeChanges) -> None:
        def changed(queue: Queue) -> QueueAttributes:
            attributes = queue.attributes.updated_from(given)
            if given.dlq_policy is not None:
                self.dlq_targets.check(account_id, name, attributes.dlq_policy, KINDS[attributes.queue_type])
            return attributes

        before, after = self.registry.set_attributes(account_id, name, changed)
        if before.attributes.rewind_period and not after.attributes.rewind_period:
            # rewind off: what was kept goes
            self.messages.of(before).drop_kept(before.queue_id, ms(self.clock.now()))
            self.receivers.drop_kept(after, ms(self.clock.now()))

    def queue_counts(self, queue: Queue) -> QueueCounts:
        return self.messages.of(queue).counts(queue.queue_id, ms(self.clock.now()))

    def backlog(self, queue: Queue) -> Backlog:
        """The queue's counts and the enqueue time of its oldest message not delayed (the metrics' gauges)."""
        return self.messages.of(queue).backlog(queue.queue_id, ms(self.clock.now()))

    def every_queue(self) -> Iterator[Queue]:
        """Every queue of every account, each followed by its receivers (as their addresses resolve to them)."""
        for account_id in self.catalog.accounts_with_queues():
            for queue in self.catalog.every_queue(account_id):
                yield queue
                yield from (view(queue, receiver) for receiver in queue.receivers)

    def held_groups(self, queue: Queue) -> int | None:
        """How many of a FIFO queue's groups have a message in flight (up to `HELD_GROUPS_SHOWN`); None for a queue
        whose kind shows none (`QueueKind.held_groups`)."""
        return kind_of(queue).held_groups(
            lambda: len(self.messages.fifo.held_groups(queue.queue_id, ms(self.clock.now()), HELD_GROUPS_SHOWN))
        )

    def queue_arn(self, queue: Queue) -> str:
        return queue_arn(self.settings.region, queue)


def queue_arn(region: str, queue: Queue) -> str:
    return f"acs:mns:{region}:{queue.account_id}:queues/{queue.name}"
