"""`GET /metrics` of the local runtime: the Prometheus exposition of the counts and the engine's gauges, every queue
and receiver of every account present, served to loopback clients only."""

from __future__ import annotations

import http.client
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from local_runtime import connections
from local_runtime import handler as requests
from local_runtime.metrics import CONTENT_TYPE, METRICS_PATH, MetricsPage, family
from mnsd.ground.http import HttpResponse
from mnsd.ground.settings import Settings
from mnsd.metrics import MESSAGES_SENT, PUSHES_DELIVERED, PUSHES_FAILED, topic_labels
from mnsd.metrics.process import ProcessMetrics
from mnsd.model.inputs import MessageInput, PublishInput
from mnsd.queues.receivers import ReceiverInput
from mnsd.services import Services, build_services
from mnsd.storage.sqlite import sqlite_storage
from tests.support.clocks import ManualClock
from tests.support.prometheus_text import QUEUE_COUNTERS, parse

A, B = "1000000000000001", "2000000000000002"
QUEUE_FAMILIES = QUEUE_COUNTERS
GAUGES = ("mns_messages_visible", "mns_messages_invisible", "mns_messages_delayed", "mns_oldest_message_age_seconds")


# --- the reader the tests use is strict ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        'a_total{x="1"} 1\n',  # no TYPE
        "# TYPE a counter\na 1",  # no final newline
        "# TYPE a counter\n# TYPE a counter\na 1\n",  # declared twice
        '# TYPE a counter\na{x="1} 1\n',  # unterminated value
        '# TYPE a counter\na{x="\\t"} 1\n',  # unknown escape
        '# TYPE a counter\na{x="1",x="2"} 1\n',  # a label twice
        '# TYPE a counter\na{x="1"} 1\na{x="1"} 2\n',  # a sample twice
        "# TYPE a counter\na one\n",  # no number
        "# TYPE a counter\n# TYPE b gauge\nb 1\na 1\n",  # a family's samples apart
        '# TYPE a counter\na{1x="1"} 1\n',  # a label name out of the alphabet
    ],
)
def test_the_reader_refuses_what_prometheus_would_not_read_as_written(text):
    with pytest.raises(ValueError):
        parse(text)


def test_the_reader_reads_labels_with_escapes():
    found = parse('# HELP a Some help\n# TYPE a gauge\na{x="q\\"uo\\\\te\\n",y="2"} 1.5 1700000000000\n')
    assert found["a"].type == "gauge" and found["a"].help == "Some help"
    assert found["a"].value(x='q"uo\\te\n', y="2") == 1.5


def test_label_values_are_escaped():
    line = list(family(MESSAGES_SENT, "counter", [((("queue", 'a"b\\c\nd'),), 2.0)]))[-1]
    assert (
        parse(f"# TYPE mns_messages_sent_total counter\n{line}\n")["mns_messages_sent_total"].value(queue='a"b\\c\nd')
        == 2
    )


# --- the page --------------------------------------------------------------------------------------------------


@pytest.fixture
def counts() -> ProcessMetrics:
    return ProcessMetrics()


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def services(counts, clock) -> Iterator[Services]:
    storage = sqlite_storage(":memory:")
    settings = Settings(credentials=f"{A}:KEYA:SECRETA,{B}:KEYB:SECRETB")
    yield build_services(settings, storage=storage, clock=clock, metrics=counts)
    storage.database.close()


def scrape(services: Services, counts: ProcessMetrics) -> dict:
    page = MetricsPage(lambda: services, counts)()
    assert page.status == 200 and page.headers["Content-Type"] == CONTENT_TYPE
    return parse(page.body.decode("utf-8"))


def test_every_queue_and_receiver_of_every_account_appears_an_idle_one_with_zeros(services, counts):
    services.queues.create_queue(A, "orders")
    services.receivers.create(A, "orders", "audit", ReceiverInput())
    services.queues.create_queue(A, "idle")
    services.queues.create_queue(B, "other")
    services.queues.create_queue(B, "gone")
    services.queues.delete_queue(B, "gone")
    services.messages.send(services.addresses.resolve(A, "orders"), [MessageInput("hello", None, 8)])
    found = scrape(services, counts)
    everyone = {(A, "orders"), (A, "orders.audit"), (A, "idle"), (B, "other")}
    for name in QUEUE_FAMILIES:
        assert found[name].type == "counter" and found[name].help
        assert {(dict(labels)["account"], dict(labels)["queue"]) for labels in found[name].samples} == everyone
    for name in GAUGES:
        assert found[name].type == "gauge"
        assert {(dict(labels)["account"], dict(labels)["queue"]) for labels in found[name].samples} == everyone
    assert found["mns_messages_sent_total"].by("queue", account=A) == {"orders": 1, "orders.audit": 1, "idle": 0}
    assert found["mns_sent_message_bytes_total"].value(account=A, queue="orders") == 5
    assert found["mns_messages_received_total"].by("queue", account=B) == {"other": 0}


def test_gauges_are_read_from_the_engine_at_each_scrape(services, counts, clock):
    services.queues.create_queue(A, "orders")
    services.messages.send(
        services.addresses.resolve(A, "orders"), [MessageInput("a", None, 8), MessageInput("b", None, 8)]
    )
    clock.advance(2.5)
    services.messages.send(services.addresses.resolve(A, "orders"), [MessageInput("later", 60, 8)])
    services.messages.receive(services.addresses.resolve(A, "orders"), 1, 0)
    clock.advance(4)
    found = scrape(services, counts)
    gauge = {name: found[name].value(account=A, queue="orders") for name in GAUGES}
    assert gauge == {
        "mns_messages_visible": 1,
        "mns_messages_invisible": 1,
        "mns_messages_delayed": 1,
        "mns_oldest_message_age_seconds": 6.5,
    }
    clock.advance(10)
    assert scrape(services, counts)["mns_oldest_message_age_seconds"].value(account=A, queue="orders") == 16.5


def test_topics_appear_and_push_results_are_labelled(services, counts):
    services.queues.create_queue(A, "orders")
    services.topics.create_topic(A, "news")
    services.topics.create_topic(A, "quiet")
    services.topics.publish(A, "news", PublishInput(body="hi"))
    counts.add(PUSHES_DELIVERED, topic_labels(A, "news", "mail"), 3)
    counts.add(PUSHES_FAILED, topic_labels(A, "news", "mail"))
    found = scrape(services, counts)
    assert found["mns_topic_messages_published_total"].by("topic", account=A) == {"news": 1, "quiet": 0}
    pushes = found["mns_push_deliveries_total"]
    assert pushes.by("result", account=A, topic="news", subscription="mail") == {"delivered": 3, "failed": 1}


def test_a_server_restart_starts_counters_from_zero_while_gauges_stay(services, counts):
    services.queues.create_queue(A, "orders")
    services.messages.send(services.addresses.resolve(A, "orders"), [MessageInput("a", None, 8)])
    restarted = scrape(services, ProcessMetrics())  # the same data, a new process's counts
    assert restarted["mns_messages_sent_total"].value(account=A, queue="orders") == 0
    assert restarted["mns_messages_visible"].value(account=A, queue="orders") == 1


# --- loopback only ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "host, loopback",
    [
        ("127.0.0.1", True),
        ("127.9.8.7", True),
        ("::1", True),
        ("::ffff:127.0.0.1", True),
        ("10.1.2.3", False),
        ("192.168.0.5", False),
        ("::ffff:10.1.2.3", False),
        ("fe80::1%eth0", False),
        ("not an address", False),
    ],
)
def test_loopback_clients_are_told_apart(host, loopback):
    assert requests.is_loopback(host) is loopback


@contextmanager
def serve_page(client: str | None) -> Iterator[tuple[str, int]]:
    """A server whose only page is a stub at /metrics, seeing its clients at `client` (None: as they are)."""
    page = lambda: HttpResponse(200, b"# TYPE x gauge\nx 1\n", {"Content-Type": CONTENT_TYPE})  # noqa: E731
    bound = requests.request_handler([], {}, True, {}, lambda *a: None, local_pages={("GET", METRICS_PATH): page})

    class SeenFrom(bound):  # type: ignore[misc, valid-type]
        def setup(self) -> None:
            super().setup()
            if client is not None:
                self.client_address = (client, 40000)

    httpd = connections.LocalHttpServer(("127.0.0.1", 0), SeenFrom)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield httpd.server_address[:2]
    httpd.shutdown()
    httpd.server_close()


def get(address: tuple[str, int], path: str = METRICS_PATH) -> tuple[int, str, bytes]:
    connection = http.client.HTTPConnection(*address, timeout=5)
    connection.request("GET", path)
    response = connection.getresponse()
    answer = response.status, response.getheader("Content-Type") or "", response.read()
    connection.close()
    return answer


def test_the_page_is_served_unsigned_to_a_loopback_client():
    with serve_page(None) as address:
        status, content_type, body = get(address)
        assert (status, content_type, body) == (200, CONTENT_TYPE, b"# TYPE x gauge\nx 1\n")
        assert get(address, METRICS_PATH + "?name[]=x")[0] == 200  # (scrapers may add a query)


def test_the_page_is_refused_to_another_client_in_mns_shape():
    with serve_page("10.1.2.3") as address:
        status, _, body = get(address)
        assert status == 403
        assert b"<Code>AccessDenied</Code>" in body and b"loopback" in body
