"""The rule of a DlqPolicy's target, which a queue and each of its receivers may set (`QueueControl`,
`ReceiverService`)."""

from __future__ import annotations

from dataclasses import dataclass

from mnsd.control.catalog import Catalog
from mnsd.ground import errors
from mnsd.model.kinds import QueueKind, kind_of
from mnsd.model.names import check_queue_name
from mnsd.model.queues import DlqPolicy


@dataclass(frozen=True)
class DeadLetterTargets:
    catalog: Catalog

    def check(self, account_id: str, name: str, policy: DlqPolicy | None, kind: QueueKind) -> None:
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
        if kind_of(target) is not kind:
            raise errors.InvalidArgument("The DeadLetterTargetQueue should be of the queue's own QueueType.")
