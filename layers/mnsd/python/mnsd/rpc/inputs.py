"""The OpenAPI's parameters read into the domain's inputs (the same the XML plane builds from its bodies; the domain
checks the values): structured parameters arrive as JSON strings, booleans in any case (`True`, `false`)."""

from __future__ import annotations

from mnsd.ground import errors
from mnsd.ground.validation import mns_bool
from mnsd.model.queues import INT_ATTRIBUTES, DlqPolicyInput, QueueAttributeChanges, RateLimitInput
from mnsd.model.tags import TagChanges
from mnsd.model.topics import SubscriptionChanges, SubscriptionInput, TopicAttributeChanges
from mnsd.rpc.call import RpcCall
from mnsd.rpc.push_kinds import endpoint_of


def dlq_policy(call: RpcCall) -> DlqPolicyInput | None:
    given = call.json_object("DlqPolicy")
    return None if given is None else DlqPolicyInput.from_json(given)


def _rate_limit(call: RpcCall) -> RateLimitInput | None:
    given = call.json_object("TenantRateLimitPolicy")
    return None if given is None else RateLimitInput.from_json(given)


def refuse_encryption(call: RpcCall) -> None:
    """Server-side encryption per queue or topic is not offered (the stack's tables are encrypted as a whole, under
    the stack's key when one is given): turning it on is refused, never accepted and ignored."""
    enabled = call.flag("EnableSSE")
    if enabled is not None and mns_bool("EnableSSE", enabled):
        raise errors.InvalidArgument(
            "Server-side encryption per queue or topic is not offered here: the stack encrypts its tables as a whole."
        )


def new_tags(call: RpcCall) -> TagChanges | None:
    given = call.tags()
    return TagChanges(add=tuple(given)) if given else None


def queue_changes(call: RpcCall, *, creating: bool) -> QueueAttributeChanges:
    refuse_encryption(call)
    return QueueAttributeChanges(
        **{attribute.field: call.text(attribute.element) for attribute in INT_ATTRIBUTES},
        logging_enabled=call.flag("EnableLogging"),
        dlq_policy=dlq_policy(call),
        rate_limit=_rate_limit(call),
        queue_type=call.text("QueueType") if creating else None,
        tags=new_tags(call) if creating else None,
    )


def topic_changes(call: RpcCall, *, creating: bool) -> TopicAttributeChanges:
    refuse_encryption(call)
    if (call.text("TopicType") or "normal").strip().lower() != "normal":
        raise errors.InvalidArgument("The TopicType should be normal: FIFO topics are not offered here.")
    return TopicAttributeChanges(
        maximum_message_size=call.text("MaxMessageSize"),
        logging_enabled=call.flag("EnableLogging"),
        tags=new_tags(call) if creating else None,
    )


def _refuse_unmapped(call: RpcCall, *names: str) -> None:
    for name in names:
        if (call.text(name) or "").strip():
            raise errors.InvalidArgument(f"The parameter {name} names a delivery this service does not offer.")
    rate_limit = call.json_object("TenantRateLimitPolicy")
    if rate_limit and rate_limit.get("Enabled") not in (None, False, "false", "False"):
        raise errors.InvalidArgument("A subscription's TenantRateLimitPolicy is not offered here.")


def endpoint(call: RpcCall) -> str:
    """The Endpoint in the form the XML plane keeps: a bare queue name, mail address or phone number of its PushType
    written in full; an Endpoint already in full kept exactly as written. The PushTypes served, and why the others are
    refused: `mnsd.rpc.push_kinds`. (The Endpoint as given is kept beside it and read back on this plane.)"""
    push_type, value = call.required("PushType"), call.required("Endpoint")
    return endpoint_of(push_type, value, call.services.settings.region, call.owner)


def subscription_input(call: RpcCall) -> SubscriptionInput:
    _refuse_unmapped(call, "StsRoleArn", "DmAttributes", "DysmsAttributes", "KafkaAttributes")
    return SubscriptionInput(
        endpoint=endpoint(call),
        endpoint_given=call.required("Endpoint"),
        filter_tag=call.text("MessageTag"),
        notify_strategy=call.text("NotifyStrategy"),
        notify_content_format=call.text("NotifyContentFormat"),
        dlq_policy=dlq_policy(call),
    )


def subscription_changes(call: RpcCall) -> SubscriptionChanges:
    _refuse_unmapped(call, "StsRoleArn")
    return SubscriptionChanges(notify_strategy=call.text("NotifyStrategy"), dlq_policy=dlq_policy(call))
