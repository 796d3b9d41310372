"""A message's history by its id over the local server, on each engine (`MNS_E2E_ENGINES`): a message sent, received
twice (given back between by ChangeMessageVisibility to 0), deleted with rewind on, rewound and dead-lettered, every
event with its time, kind, key and dequeue count (`GET /queues/{q}/messages/{id}/history`); the answers for a queue
that does not log and for a history that aged out or was never in the log's window. The SDK sends and receives; the
calls it does not know are raw signed requests."""

from __future__ import annotations

import time
import uuid

import pytest
from mns.account import Account
from mns.queue import Message
from mns.subscription import SubscriptionMeta
from mns.topic import TopicMessage, TopicMeta

from tests.support.local_server import ServerClock
from tests.support.message_history import events as history_events
from tests.support.message_history import life, told
from tests.support.raw_http import NS, RawClient, RawResponse, assert_mns_error
from tests.support.servers import ACCOUNT_A, local_server

DAY_MS = 86_400_000
LOG_WAIT_SECONDS = 15  # the stream or change reader writes the log in the background


def queue_xml(inner: str) -> str:
    return f'<?xml version="1.0" encoding="UTF-8"?><Queue xmlns="http://mns.aliyuncs.com/doc/v1">{inner}</Queue>'


def events(response: RawResponse) -> list[dict[str, str]]:
    return history_events(response.body)


def history(raw: RawClient, queue: str, message_id: str) -> RawResponse:
    return raw.request("GET", f"/queues/{queue}/messages/{message_id}/history")


def history_of(raw: RawClient, queue: str, message_id: str, kinds: int) -> RawResponse:
    """The history once the log holds `kinds` events of the message."""
    deadline = time.monotonic() + LOG_WAIT_SECONDS
    while True:
        response = history(raw, queue, message_id)
        if (response.status == 200 and len(events(response)) >= kinds) or time.monotonic() > deadline:
            return response
        time.sleep(0.2)


@pytest.fixture(scope="module")
def server_clock(tmp_path_factory, engine) -> ServerClock:
    """This module's server's clock (the shared server's is moved by the rest of the suite)."""
    return ServerClock(tmp_path_factory.mktemp(f"history-clock-{engine}") / "offset")


@pytest.fixture(scope="module")
def endpoint(tmp_path_factory, engine, server_clock):
    """A server of this module's own: the log is written behind the calls, by the server's stream (or change) reader,
    which on the suite's shared moto server reads every other test's traffic first (past LOG_WAIT_SECONDS in a full
    run on a loaded machine)."""
    with local_server(tmp_path_factory, engine, "history", server_clock) as url:
        yield url


@pytest.fixture(scope="module")
def account_a(endpoint) -> Account:
    return Account(endpoint, ACCOUNT_A[1], ACCOUNT_A[2])


@pytest.fixture(scope="module")
def raw_a(endpoint) -> RawClient:
    return RawClient(endpoint, ACCOUNT_A[1], ACCOUNT_A[2])


@pytest.fixture
def queues(raw_a):
    made: list[str] = []

    def make(inner: str) -> str:
        name = "e2e-h-" + uuid.uuid4().hex[:16]
        response = raw_a.request("PUT", f"/queues/{name}", queue_xml(inner))
        assert response.status == 201, response.body
        made.append(name)
        return name

    yield make
    for name in made:
        raw_a.request("DELETE", f"/queues/{name}")


def test_the_history_of_a_message_sent_received_twice_given_back_rewound_and_dead_lettered(
    account_a, raw_a, queues, server_clock
):
    dead = queues("")
    name = queues(
        "<LoggingEnabled>True</LoggingEnabled><VisibilityTimeout>30</VisibilityTimeout><RewindPeriod>600</RewindPeriod>"
        f"<DlqPolicy><Enabled>True</Enabled><DeadLetterTargetQueue>{dead}</DeadLetterTargetQueue>"
        "<MaxReceiveCount>2</MaxReceiveCount></DlqPolicy>"
    )
    queue = account_a.get_queue(name)
    queue.set_encoding(False)
    message_id = queue.send_message(Message("the one")).message_id
    first = queue.receive_message(0)
    assert first.message_id == message_id and first.dequeue_count == 1
    given_back = raw_a.request(
        "PUT", f"/queues/{name}/messages?ReceiptHandle={first.receipt_handle}&VisibilityTimeout=0"
    )
    assert given_back.status == 200, given_back.body
    server_clock.advance(0.01)
    second = queue.receive_message(0)
    assert second.message_id == message_id and second.dequeue_count == 2
    queue.delete_message(second.receipt_handle)  # kept: rewind is on
    rewound = raw_a.request("PUT", f"/queues/{name}?rewindtime={first.enqueue_time // 1000}")
    assert rewound.status == 204, rewound.body
    third = raw_a.request("GET", f"/queues/{name}/messages?waitseconds=0")
    assert_mns_error(third, 404, "MessageNotExist")  # its third receive moved it to the dead-letter queue
    dead_queue = account_a.get_queue(dead)
    dead_queue.set_encoding(False)
    letter = dead_queue.peek_message()

    response = history_of(raw_a, name, message_id, 7)

    assert response.status == 200, response.body
    root = response.xml()
    assert (root.findtext(NS + "QueueName"), root.findtext(NS + "MessageId")) == (name, message_id)
    found = events(response)
    assert told(found) == life(ACCOUNT_A[1], ACCOUNT_A[1])
    assert int(found[0]["Time"]) == first.enqueue_time and int(found[1]["Time"]) == first.first_dequeue_time
    assert int(found[1]["NextVisibleTime"]) == first.next_visible_time
    assert int(found[2]["NextVisibleTime"]) <= server_clock.now() * 1000  # given back: receivable at once
    assert all(abs(int(e["Time"]) - server_clock.now() * 1000) < 60_000 for e in found)
    assert (found[-1]["TargetQueue"], found[-1]["TargetMessageId"]) == (dead, letter.message_id)


def test_a_queue_that_does_not_log_answers_logging_not_enabled(account_a, raw_a, queues):
    name = queues("")
    queue = account_a.get_queue(name)
    message_id = queue.send_message(Message("quiet")).message_id

    response = history(raw_a, name, message_id)

    assert_mns_error(response, 409, "LoggingNotEnabled")


def test_a_history_older_than_the_log_has_aged_out_and_an_unknown_one_is_not_in_the_window(account_a, raw_a, queues):
    name = queues("<LoggingEnabled>True</LoggingEnabled>")
    now_ms = int(time.time() * 1000)
    sent_id = account_a.get_queue(name).send_message(Message("x")).message_id
    stem, slot, made, tail = sent_id.split("-")  # an id of this queue's shape, made 8 days ago (the log keeps 7)
    aged_id = f"{stem}-{slot}-{now_ms - 8 * DAY_MS:X}-{tail}"

    assert_mns_error(history(raw_a, name, aged_id), 404, "MessageHistoryExpired")
    unknown_id = f"{stem[::-1]}-{slot}-{made}-{tail}"
    assert_mns_error(history(raw_a, name, unknown_id), 404, "MessageHistoryNotExist")
    assert history_of(raw_a, name, sent_id, 1).status == 200  # the queue's own message, for contrast


def test_a_topic_messages_history_has_its_publication_and_each_push_attempt(account_a, raw_a, push_endpoint):
    name = "e2e-h-t-" + uuid.uuid4().hex[:12]
    meta = TopicMeta()
    meta.set_logging_enabled(True)
    topic = account_a.get_topic(name)
    topic.create(meta)
    try:
        push_endpoint.status_for = lambda n: 500 if n == 1 else 204
        subscription = SubscriptionMeta(push_endpoint.url("/hook"), "EXPONENTIAL_DECAY_RETRY")
        topic.get_subscription("hook").subscribe(subscription)
        message_id = topic.publish_message(TopicMessage("pushed twice")).message_id
        push_endpoint.wait_for(2, timeout=15)  # fails first, delivered by the first retry

        response = raw_a.request("GET", f"/topics/{name}/messages/{message_id}/history")
        deadline = time.monotonic() + LOG_WAIT_SECONDS
        while len([e for e in events(response) if e["Kind"] == "push"]) < 2 and time.monotonic() < deadline:
            time.sleep(0.2)
            response = raw_a.request("GET", f"/topics/{name}/messages/{message_id}/history")

        assert response.status == 200, response.body
        assert response.xml().findtext(NS + "TopicName") == name
        pushes = [(e["SubscriptionName"], e["Attempt"], e["Outcome"], e["Status"]) for e in events(response)[1:]]
        assert events(response)[0]["Kind"] == "publish"
        assert pushes == [("hook", "1", "failure", "500"), ("hook", "2", "success", "204")]
    finally:
        raw_a.request("DELETE", f"/topics/{name}")
