"""A queue's receivers on the wire (`mnsd.queues.receivers`): the `<Receiver>` body of CreateReceiver, and the
`<Receiver>` and `<Receivers>` answers of GetReceiverAttributes and ListReceiver."""

from __future__ import annotations

from collections.abc import Sequence

from mnsd.queues.receivers import ReceiverInput, ReceiverState
from mnsd.wire.codec import Element, Node
from mnsd.wire.requests import dlq_policy_input, wire_values
from mnsd.wire.responses import Fields, dlq_policy_text


def receiver_input(xml: Element | None) -> ReceiverInput:
    """The attributes a `<Receiver>` body gives; none without a body (a receiver starting now, as its queue)."""
    if xml is None:
        return ReceiverInput()
    return ReceiverInput(
        dlq_policy=dlq_policy_input(xml.child("DlqPolicy")),
        **wire_values(xml, "StartTime", "VisibilityTimeout", "PollingWaitSeconds"),
    )


def receiver_node(state: ReceiverState) -> Node:
    """A receiver: its names, times, the attributes it receives with (its own, else its queue's) and its counts;
    `CopyPending` while messages before its creation (an earlier StartTime) are still to be copied."""
    receiver, attributes, counts = state.receiver, state.queue.attributes, state.counts
    fields: Fields = [
        ("ReceiverName", receiver.name),
        ("Address", state.queue.name),
        ("CreateTime", receiver.create_time_ms // 1000),
        ("LastModifyTime", state.queue.last_modify_time),
        ("StartTime", receiver.start_time),
        ("VisibilityTimeout", attributes.visibility_timeout),
        ("PollingWaitSeconds", attributes.polling_wait_seconds),
    ]
    policy = attributes.dlq_policy
    if policy is not None:
        fields.append(("DlqPolicy", dlq_policy_text(True, policy.target, policy.max_receive_count)))
    if state.copying:
        fields.append(("CopyPending", True))
    fields += [
        ("ActiveMessages", counts.active),
        ("InactiveMessages", counts.inactive),
        ("DelayMessages", counts.delayed),
    ]
    return Node("Receiver", fields)


def receiver_list(states: Sequence[ReceiverState]) -> Node:
    """ListReceiver: every receiver of the queue."""
    return Node("Receivers", [("Receiver", receiver_node(state)) for state in states])
