"""An extension for the console's charts: `GET /queues/{q}?metrics=hourly[&hours=N]` and
`GET /topics/{t}/subscriptions/{s}?metrics=hourly[&hours=N]` answer hourly activity counts from the
operation log (written while the queue's or topic's LoggingEnabled is on), for the signing tenant only."""

from __future__ import annotations

from mnsd.calls.call import Call, xml_response
from mnsd.ground import errors
from mnsd.ground.http import HttpResponse
from mnsd.ground.validation import int_in_range
from mnsd.log import metrics
from mnsd.log.metrics import HourlyCounts, Window
from mnsd.wire import responses
from mnsd.wire.responses import Fields


def _window(call: Call, choices: str = "hourly") -> Window:
    if (call.request.query("metrics") or "").lower() != "hourly":
        raise errors.InvalidArgument(f"The value of metrics should be {choices}.")
    hours_text = call.request.query("hours")
    hours = metrics.DEFAULT_HOURS if hours_text is None else int_in_range("hours", hours_text, 1, metrics.MAX_HOURS)
    return Window.ending(call.services.clock.now(), hours)


def _response(root: str, fields: Fields, window: Window, truncated: bool, hourly: list[HourlyCounts]) -> HttpResponse:
    return xml_response(responses.hourly_metrics(root, fields, window.hours, truncated, hourly))


def queue_metrics(call: Call) -> HttpResponse:
    queue = call.queue()
    window = _window(call, "hourly or minutely")
    read = call.services.storage.log.read(
        call.account_id, "queue", queue.name, window.first_hour_ms, window.end_ms, metrics.MAX_ITEMS
    )
    fields: Fields = [("QueueName", queue.name), ("LoggingEnabled", queue.attributes.logging_enabled)]
    return _response("QueueMetrics", fields, window, read.truncated, metrics.queue_hourly(read.events, window))


def subscription_metrics(call: Call) -> HttpResponse:
    topics = call.services.topics
    topic = topics.get_topic(call.account_id, call.path("topic"))
    subscription = topics.get_subscription(call.account_id, topic.name, call.path("subscription"))
    window = _window(call)
    read = call.services.storage.log.read(
        call.account_id, "topic", topic.name, window.first_hour_ms, window.end_ms, metrics.MAX_ITEMS, subscription.name
    )
    fields: Fields = [
        ("TopicName", topic.name),
        ("SubscriptionName", subscription.name),
        ("LoggingEnabled", topic.attributes.logging_enabled),
    ]
    hourly = metrics.subscription_hourly(read.events, window, subscription.name)
    return _response("SubscriptionMetrics", fields, window, read.truncated, hourly)
