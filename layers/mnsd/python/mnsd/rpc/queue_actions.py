"""The OpenAPI's queue reads, on the queue service the XML operations use (its writes: `mnsd.rpc.records`)."""

from __future__ import annotations

from typing import Any

from mnsd.rpc import listing, views
from mnsd.rpc.call import RpcCall


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
