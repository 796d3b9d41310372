"""The console's minute chart on the local runtime: `GET /queues/{q}?metrics=minutely`, signed, over the embedded
engine, with the services counting into the minute ring and the local runtime's sampler reading the gauges.
A workload over two minutes of a clock moved by hand, and the exact minutes it must produce."""

from __future__ import annotations

import time
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from email.utils import formatdate

import pytest

from local_runtime.minutes import OFFSET_MS, GaugeSampler, sample_gauges, until_next_round
from mnsd.access.authentication import sign, string_to_sign
from mnsd.ground import errors
from mnsd.ground.http import HttpRequest
from mnsd.ground.settings import Settings
from mnsd.metrics import MESSAGES_VISIBLE, TeeMetrics, queue_labels
from mnsd.metrics.minutes import MinuteWindow
from mnsd.metrics.process import ProcessMetrics
from mnsd.metrics.ring import MinuteRing, RecordedMinutes
from mnsd.model.inputs import MessageInput
from mnsd.model.queues import DlqPolicyInput, QueueAttributeChanges
from mnsd.queues.receivers import ReceiverInput
from mnsd.request import api
from mnsd.services import Services, build_services
from mnsd.storage.sqlite import sqlite_storage
from tests.support.clocks import ManualClock

ACCOUNT = "1000000000000001"
NS = "{http://mns.aliyuncs.com/doc/v1}"
START = 1_700_000_000.0  # 20 s into a minute


@pytest.fixture
def ring() -> MinuteRing:
    return MinuteRing(ManualClock(START))


@pytest.fixture
def services(ring) -> Iterator[Services]:
    storage = sqlite_storage(":memory:")
    built = build_services(
        Settings(credentials=f"{ACCOUNT}:KEYID:SECRET,2000000000000002:OTHER:OTHERSECRET"),
        storage=storage,
        clock=ring.clock,
        metrics=TeeMetrics(ProcessMetrics(), ring),
        minutes=RecordedMinutes(ring, lambda queue: built.queues.backlog(queue)),
    )
    yield built
    storage.database.close()


def get(services: Services, name: str, query: str, key: tuple[str, str] = ("KEYID", "SECRET")):
    """A signed `GET /queues/{name}?{query}` (as the console signs: x-mns-date), answered by the API pipeline."""
    headers = {"x-mns-version": "2015-06-06", "x-mns-date": formatdate(services.clock.now(), usegmt=True)}
    request = HttpRequest("GET", f"/queues/{name}", query, headers, b"", {"queue": name})
    request.headers["authorization"] = f"MNS {key[0]}:{sign(key[1], string_to_sign(request, headers['x-mns-date']))}"
    response = api.handle("get_queue", request, services)
    return response.status, ET.fromstring(response.body)


def minutes(services: Services, name: str) -> list[dict[str, int]]:
    status, root = get(services, name, "metrics=minutely")
    assert status == 200 and root.tag == NS + "QueueMetrics", ET.tostring(root)
    assert (root.find(NS + "QueueName").text, root.find(NS + "Minutes").text) == (name, "60")
    return [{child.tag[len(NS) :]: int(child.text) for child in b} for b in root.iter(NS + "Bucket")]


def send(services: Services, name: str, *bodies: str, delay: int | None = None) -> None:
    services.messages.send(services.addresses.resolve(ACCOUNT, name), [MessageInput(body, delay, 8) for body in bodies])


def receive(services: Services, name: str, count: int) -> list:
    try:
        return services.messages.receive(services.addresses.resolve(ACCOUNT, name), count, 0)
    except errors.MessageNotExist:
        return []


def test_a_two_minute_workload_gives_its_exact_minutes(services, ring) -> None:
    clock = services.clock
    services.queues.create_queue(ACCOUNT, "orders-dlq")
    policy = DlqPolicyInput("true", "orders-dlq", "1")
    services.queues.create_queue(ACCOUNT, "orders", QueueAttributeChanges(visibility_timeout="30", dlq_policy=policy))
    # minute 1: three sent (one delayed), two received, then moved to the dead-letter queue by an empty receive
    send(services, "orders", "a", "b")
    send(services, "orders", "c", delay=600)
    assert sample_gauges(services.queues, ring, int(clock.now() * 1000)) == 2  # the sampler's round: 2 queues
    assert len(receive(services, "orders", 2)) == 2
    clock.advance(31)
    assert receive(services, "orders", 2) == []  # moves a and b (received once): an empty receive
    # minute 2: two sent, both received, one deleted: one in flight, one delayed
    clock.advance(29)
    send(services, "orders", "d")
    send(services, "orders", "e")
    (d,) = receive(services, "orders", 1)
    (e,) = receive(services, "orders", 1)
    services.messages.delete(services.addresses.resolve(ACCOUNT, "orders"), e.receipt_handle)
    clock.advance(5)

    found = minutes(services, "orders")

    assert len(found) == 60
    assert [b["Time"] for b in found] == [t // 1000 for t in MinuteWindow.ending(clock.now()).starts()]
    *earlier, first, second = found
    assert not any(v for b in earlier for k, v in b.items() if k != "Time")  # nothing before the workload
    assert first == {
        "Time": first["Time"],
        "NumberOfMessagesSent": 3,
        "NumberOfMessagesReceived": 2,
        "NumberOfEmptyReceives": 1,
        "NumberOfMessagesDeleted": 0,
        "NumberOfMessagesDeadLettered": 2,
        "ApproximateNumberOfMessagesVisible": 2,  # as the sampler read them after the sends
        "ApproximateNumberOfMessagesNotVisible": 0,
        "ApproximateNumberOfMessagesDelayed": 1,
        "ApproximateAgeOfOldestMessage": 0,
    }
    assert second == {
        "Time": first["Time"] + 60,
        "NumberOfMessagesSent": 2,
        "NumberOfMessagesReceived": 2,
        "NumberOfEmptyReceives": 0,
        "NumberOfMessagesDeleted": 1,
        "NumberOfMessagesDeadLettered": 0,
        "ApproximateNumberOfMessagesVisible": 0,  # read when asked: d in flight, c delayed
        "ApproximateNumberOfMessagesNotVisible": 1,
        "ApproximateNumberOfMessagesDelayed": 1,
        "ApproximateAgeOfOldestMessage": 5,  # d, enqueued 5 s ago
    }
    dlq = minutes(services, "orders-dlq")[-1]
    assert (dlq["NumberOfMessagesSent"], dlq["ApproximateNumberOfMessagesVisible"]) == (0, 2)  # no send, 2 there


def test_a_receiver_has_its_own_minutes_at_its_address(services) -> None:
    services.queues.create_queue(ACCOUNT, "orders")
    services.receivers.create(ACCOUNT, "orders", "audit", ReceiverInput())
    send(services, "orders", "a", "b")
    services.messages.receive(services.addresses.resolve(ACCOUNT, "orders.audit"), 1, 0)
    audit, orders = minutes(services, "orders.audit")[-1], minutes(services, "orders")[-1]
    assert (audit["NumberOfMessagesSent"], audit["NumberOfMessagesReceived"]) == (2, 1)
    assert (audit["ApproximateNumberOfMessagesVisible"], audit["ApproximateNumberOfMessagesNotVisible"]) == (1, 1)
    assert (orders["NumberOfMessagesReceived"], orders["ApproximateNumberOfMessagesVisible"]) == (0, 2)


def test_another_accounts_queue_of_the_same_name_has_its_own_minutes(services) -> None:
    services.queues.create_queue(ACCOUNT, "orders")
    services.queues.create_queue("2000000000000002", "orders")
    send(services, "orders", "a")
    status, root = get(services, "orders", "metrics=minutely", key=("OTHER", "OTHERSECRET"))
    assert status == 200
    assert {int(n.text) for n in root.iter(NS + "NumberOfMessagesSent")} == {0}


@pytest.mark.parametrize(
    ("name", "query", "status", "code", "message"),
    [
        ("orders", "metrics=daily", 400, "InvalidArgument", "The value of metrics should be hourly or minutely."),
        ("none", "metrics=minutely", 404, "QueueNotExist", None),
    ],
)
def test_a_bad_value_or_a_missing_queue_gets_its_mns_error(services, name, query, status, code, message) -> None:
    services.queues.create_queue(ACCOUNT, "orders")
    got, root = get(services, name, query)
    assert (got, root.find(NS + "Code").text) == (status, code)
    assert message is None or root.find(NS + "Message").text == message


def test_get_queue_attributes_is_unchanged_beside_the_extension(services) -> None:
    services.queues.create_queue(ACCOUNT, "orders")
    status, root = get(services, "orders", "")
    assert status == 200 and root.tag == NS + "Queue"


def test_rounds_start_a_second_into_each_minute() -> None:
    minute = 28_333_333 * 60_000
    assert until_next_round(minute) == (60_000 + OFFSET_MS) / 1000
    assert until_next_round(minute + 59_000) == (1_000 + OFFSET_MS) / 1000


def test_the_sampler_reads_every_queue_at_once_then_stops_when_told(services, ring) -> None:
    services.queues.create_queue(ACCOUNT, "orders")
    send(services, "orders", "a", "b")
    sampler = GaugeSampler(lambda: services.queues, ring).start()
    window = MinuteWindow.ending(services.clock.now())
    deadline = time.monotonic() + 5
    while ring.minutes(queue_labels(ACCOUNT, "orders"), window)[-1].values[MESSAGES_VISIBLE] != 2:
        assert time.monotonic() < deadline, "no round"
        time.sleep(0.01)
    started = time.monotonic()
    sampler.stop()
    assert time.monotonic() - started < 1  # it waits for the next minute on its stop event
