"""When a request is wrong in two ways, the error MNS answers first: a missing queue, topic or subscription before a
bad value in the body (attributes, subscriptions, publishes), a bad sent message before a missing queue, a bad name
before bad attributes."""

from __future__ import annotations

import uuid

import pytest

XMLNS = 'xmlns="http://mns.aliyuncs.com/doc/v1"'


def xml(tag: str, inner: str) -> str:
    return f'<?xml version="1.0" encoding="UTF-8"?><{tag} {XMLNS}>{inner}</{tag}>'


@pytest.fixture
def missing() -> str:
    return "e2e-prec-" + uuid.uuid4().hex[:20]


@pytest.mark.parametrize(
    ("method", "path", "body", "status", "code"),
    [
        (
            "PUT",
            "/queues/{name}?metaoverride=true",
            xml("Queue", "<DelaySeconds>-1</DelaySeconds>"),
            404,
            "QueueNotExist",
        ),
        (
            "PUT",
            "/topics/{name}?metaoverride=true",
            xml("Topic", "<LoggingEnabled>x</LoggingEnabled>"),
            404,
            "TopicNotExist",
        ),
        ("POST", "/topics/{name}/messages", xml("Message", "<MessageBody></MessageBody>"), 404, "TopicNotExist"),
        (
            "POST",
            "/topics/{name}/messages",
            xml("Message", "<MessageBody>x</MessageBody><UserProperties><PropertyValue/></UserProperties>"),
            404,
            "TopicNotExist",
        ),
        (
            "PUT",
            "/topics/{name}/subscriptions/s",
            xml("Subscription", "<Endpoint>nowhere</Endpoint>"),
            404,
            "TopicNotExist",
        ),
        (
            "PUT",
            "/topics/{name}/subscriptions/s?metaoverride=true",
            xml("Subscription", "<NotifyStrategy>SOMETIMES</NotifyStrategy>"),
            404,
            "SubscriptionNotExist",
        ),
        ("POST", "/queues/{name}/messages", xml("Message", "<MessageBody></MessageBody>"), 400, "InvalidArgument"),
        ("POST", "/queues/{name}/messages", xml("Messages", ""), 400, "InvalidArgument"),
        ("PUT", "/queues/{name}_bad", xml("Queue", "<DelaySeconds>-1</DelaySeconds>"), 400, "InvalidQueueName"),
        (
            "PUT",
            "/topics/{name}_bad",
            xml("Topic", "<MaximumMessageSize>1</MaximumMessageSize>"),
            400,
            "TopicNameInvalid",
        ),
    ],
)
def test_first_error_of_a_request_wrong_twice(raw_a, mns_error, missing, method, path, body, status, code):
    mns_error(raw_a.request(method, path.format(name=missing), body), status, code)
