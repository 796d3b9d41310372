"""The OpenAPI's queue actions, on the queue service the XML operations use."""

from __future__ import annotations

from typing import Any

from mnsd.queues.model import QueueAttributeChanges
from mnsd.rpc import inputs, listing, views
from mnsd.rpc.call import RpcCall
from mnsd.rpc.envelope import DONE


def create_queue(call: RpcCall) -> Any:
    name = call.required("QueueName")
    changes = inputs.queue_changes(call, creating=True)
    queues = call.services.queues
    if not queues.create_queue(call.owner, name, changes) and changes.tags is not None:
        # an equal queue stood (tags are not compared): the tags named are set on it, as TagResources would
        queues.set_queue_attributes(call.owner, name, QueueAttributeChanges(tags=changes.tags))
    return DONE


def delete_queue(call: RpcCall) -> Any:
    call.services.queues.delete_queue(call.owner, call.required("QueueName"))
    return DONE


def set_queue_attributes(call: RpcCall) -> Any:
    name = call.required("QueueName")
    call.services.queues.set_queue_attributes(call.owner, name, inputs.queue_changes(call, creating=False))
    return DONE


def get_queue_attributes(call: RpcCall) -> Any:
    queues = call.services.queues
    queue = queues.get_queue(call.owner, call.required("QueueName"))
    return views.queue_view(queue, queues.queue_counts(queue))


def list_queue(call: RpcCall) -> Any:
    page_num, page_size = listing.page_request(call)
    queues = call.services.queues
    queue_type = (call.text("QueueType") or "").strip().lower()
    tagged = listing.tagged(call)
    found = [
        q
        for q in listing.every(queues.list_queues, call.owner, call.text("QueueName") or "")
        if (not queue_type or q.attributes.queue_type == queue_type) and tagged(q.attributes.tags)
    ]
    endpoint = call.endpoint()
    entries = [
        views.queue_entry(q, queues.queue_counts(q), endpoint) for q in listing.paged(found, page_num, page_size)
    ]
    return views.page(entries, page_num, page_size, len(found))
