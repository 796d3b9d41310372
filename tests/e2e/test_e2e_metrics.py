"""`GET /metrics` of `make run`, on each engine: unsigned, the Prometheus text format, the counts of what the official
SDK just did and the gauges read from the engine; a new receiver and an idle queue appear with zeros."""

from __future__ import annotations

import urllib.request

import pytest
from mns.mns_exception import MNSServerException
from mns.queue import Message

from tests.e2e.resources import text_queue
from tests.support.prometheus_text import QUEUE_COUNTERS, parse
from tests.support.servers import ACCOUNT_A

COUNTERS = QUEUE_COUNTERS


def scrape(endpoint: str) -> dict:
    with urllib.request.urlopen(endpoint + "/metrics", timeout=10) as response:  # no signature
        assert response.status == 200
        assert response.headers["Content-Type"].startswith("text/plain; version=0.0.4")
        return parse(response.read().decode("utf-8"))


def of(found: dict, family: str, queue: str) -> float:
    return found[family].value(account=ACCOUNT_A[0], queue=queue)


def test_metrics_count_what_the_sdk_did_and_read_the_gauges(endpoint, account_a, raw_a, qname, server_clock):
    idle = text_queue(account_a, qname + "-idle")
    queue = text_queue(account_a, qname)
    assert raw_a.request("PUT", f"/queues/{qname}/receivers/audit").status == 201
    queue.send_message(Message("alpha"))
    queue.batch_send_message([Message("b1"), Message("b2"), Message("b3")])
    delayed = Message("later")
    delayed.set_delayseconds(600)
    queue.send_message(delayed)
    sent_at = server_clock.now()
    received = queue.batch_receive_message(16, wait_seconds=1)
    assert sorted(m.message_body for m in received) == ["alpha", "b1", "b2", "b3"]
    queue.delete_message(received[0].receipt_handle)
    queue.batch_delete_message([m.receipt_handle for m in received[1:3]])
    with pytest.raises(MNSServerException):
        queue.receive_message(wait_seconds=0)
    server_clock.advance(1.0)  # the oldest message a second old
    found = scrape(endpoint)
    scraped_at = server_clock.now()

    expected = {
        "mns_messages_sent_total": 5,
        "mns_sent_message_bytes_total": 5 + 2 + 2 + 2 + 5,
        "mns_messages_received_total": 4,
        "mns_empty_receives_total": 1,
        "mns_messages_deleted_total": 3,
    }
    for family in COUNTERS:
        assert of(found, family, qname) == expected.get(family, 0), family
        assert of(found, family, idle.queue_name) == 0, family
    assert of(found, "mns_messages_sent_total", f"{qname}.audit") == 5
    assert of(found, "mns_messages_received_total", f"{qname}.audit") == 0
    gauges = {name: of(found, name, qname) for name in ("mns_messages_visible", "mns_messages_invisible")}
    assert gauges == {"mns_messages_visible": 0, "mns_messages_invisible": 1}  # b3 in flight
    assert of(found, "mns_messages_delayed", qname) == 1
    age = of(found, "mns_oldest_message_age_seconds", qname)
    assert 1.0 <= age <= scraped_at - sent_at + 1.0  # b3, sent before `sent_at`
    assert of(found, "mns_messages_visible", f"{qname}.audit") == 4
    assert of(found, "mns_oldest_message_age_seconds", idle.queue_name) == 0
