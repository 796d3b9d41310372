"""The OpenAPI's topic reads and subscription actions, on the topic service the XML operations use (a topic's
writes: `mnsd.rpc.records`)."""

from __future__ import annotations

from typing import Any

from mnsd.rpc import inputs, listing, views
from mnsd.rpc.call import RpcCall
from mnsd.rpc.envelope import DONE


def get_topic_attributes(call: RpcCall) -> Any:
    topics = call.services.topics
    topic = topics.get_topic(call.owner, call.required("TopicName"))
    return views.topic_view(topic, topics.message_count(topic), call.endpoint())


def list_topic(call: RpcCall) -> Any:
    page_num, page_size = listing.page_request(call)
    topics = call.services.topics
    tagged = listing.tagged(call)
    every = listing.every(topics.list_topics, call.owner, call.text("TopicName") or "")
    # every topic is a normal one (FIFO topics are not offered): a TopicType filter of another type finds none
    normal = (call.text("TopicType") or "normal").strip().lower() == "normal"
    found = [t for t in every if normal and tagged(t.attributes.tags)]
    endpoint = call.endpoint()
    entries = [
        views.topic_view(t, topics.message_count(t), endpoint) for t in listing.paged(found, page_num, page_size)
    ]
    return views.page(entries, page_num, page_size, len(found))


def subscribe(call: RpcCall) -> Any:
    topic, name = call.required("TopicName"), call.required("SubscriptionName")
    call.services.topics.subscribe(call.owner, topic, name, inputs.subscription_input(call))
    return f"{call.endpoint()}/topics/{topic}/subscriptions/{name}"


def unsubscribe(call: RpcCall) -> Any:
    call.services.topics.unsubscribe(call.owner, call.required("TopicName"), call.required("SubscriptionName"))
    return DONE


def set_subscription_attributes(call: RpcCall) -> Any:
    topic, name = call.required("TopicName"), call.required("SubscriptionName")
    call.services.topics.set_subscription_attributes(call.owner, topic, name, inputs.subscription_changes(call))
    return DONE


def get_subscription_attributes(call: RpcCall) -> Any:
    topics = call.services.topics
    found = topics.get_subscription(call.owner, call.required("TopicName"), call.required("SubscriptionName"))
    return views.subscription_view(found)


def list_subscription_by_topic(call: RpcCall) -> Any:
    page_num, page_size = listing.page_request(call)
    topic = call.required("TopicName")
    topics = call.services.topics

    def list_page(account: str, prefix: str, limit: int, marker: str | None) -> Any:
        return topics.list_subscriptions(account, topic, prefix, limit, marker)

    endpoint_value = call.text("EndpointValue")
    found = [
        s
        for s in listing.every(list_page, call.owner, call.text("SubscriptionName") or "")
        if not endpoint_value or endpoint_value in (s.attributes.endpoint, s.attributes.shown_endpoint)
    ]
    base = f"{call.endpoint()}/topics/{topic}/subscriptions"
    entries = [
        {**views.subscription_view(s), "SubscriptionURL": f"{base}/{s.name}"}
        for s in listing.paged(found, page_num, page_size)
    ]
    return views.page(entries, page_num, page_size, len(found))
