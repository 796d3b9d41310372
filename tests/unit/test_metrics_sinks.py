"""The metrics sinks: counters in the process, and EMF lines printed at the end of an invocation."""

from __future__ import annotations

import json
import threading

from mnsd.metrics import (
    MESSAGES_RECEIVED,
    MESSAGES_SENT,
    PUSHES_FAILED,
    SENT_MESSAGE_SIZE,
    queue_labels,
    topic_labels,
)
from mnsd.metrics.emf import EmfMetrics
from mnsd.metrics.process import ProcessMetrics

ORDERS = queue_labels("1000000000000001", "orders")
AUDIT = queue_labels("1000000000000001", "orders.audit")


def emf_lines(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.startswith('{"_aws"')]


def test_process_counters_add_up_across_threads():
    counts = ProcessMetrics()

    def work() -> None:
        for _ in range(1000):
            counts.add(MESSAGES_SENT, ORDERS)
            counts.add(SENT_MESSAGE_SIZE, ORDERS, 3)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    counts.flush()  # nothing published, nothing forgotten
    assert counts.counts() == {(MESSAGES_SENT, ORDERS): 8000, (SENT_MESSAGE_SIZE, ORDERS): 24000}


def test_emf_prints_one_line_per_queue_with_its_dimensions_and_no_service(capsys, monkeypatch):
    monkeypatch.setenv("POWERTOOLS_SERVICE_NAME", "mns")  # as the stack sets it: must not become a dimension
    sink = EmfMetrics()
    sink.add(MESSAGES_SENT, ORDERS, 2)
    sink.add(MESSAGES_SENT, ORDERS, 1)
    sink.add(SENT_MESSAGE_SIZE, ORDERS, 10)
    sink.add(SENT_MESSAGE_SIZE, ORDERS, 30)
    sink.add(MESSAGES_RECEIVED, AUDIT, 4)
    assert capsys.readouterr().out == ""  # nothing before the flush
    sink.flush()
    orders, audit = emf_lines(capsys.readouterr().out)
    assert orders["_aws"]["CloudWatchMetrics"] == [
        {
            "Namespace": "MNS",
            "Dimensions": [["AccountId", "QueueName"]],
            "Metrics": [
                {"Name": "NumberOfMessagesSent", "Unit": "Count"},
                {"Name": "SentMessageSize", "Unit": "Bytes"},
            ],
        }
    ]
    assert (orders["AccountId"], orders["QueueName"]) == ("1000000000000001", "orders")
    assert orders["NumberOfMessagesSent"] == [3.0]  # summed
    assert orders["SentMessageSize"] == [10.0, 30.0]  # each message's size: Average and Maximum per message
    assert "service" not in orders
    assert (audit["QueueName"], audit["NumberOfMessagesReceived"]) == ("orders.audit", [4.0])
    sink.flush()
    assert capsys.readouterr().out == ""  # a flush prints what was counted since the last one only


def test_emf_names_a_subscription_by_its_topic(capsys):
    sink = EmfMetrics()
    sink.add(PUSHES_FAILED, topic_labels("1000000000000001", "news", "mail"))
    sink.flush()
    (line,) = emf_lines(capsys.readouterr().out)
    assert line["_aws"]["CloudWatchMetrics"][0]["Dimensions"] == [["AccountId", "TopicName", "SubscriptionName"]]
    assert (line["TopicName"], line["SubscriptionName"], line["NumberOfNotificationsFailed"]) == ("news", "mail", [1.0])


def test_emf_keeps_every_size_of_a_busy_invocation(capsys):
    sink = EmfMetrics()
    for size in range(250):
        sink.add(SENT_MESSAGE_SIZE, ORDERS, size)
    sink.flush()
    lines = emf_lines(capsys.readouterr().out)
    assert sorted(v for line in lines for v in line["SentMessageSize"]) == [float(s) for s in range(250)]
    assert max(len(line["SentMessageSize"]) for line in lines) <= 100  # EMF's limit per metric and line


def test_a_failing_emf_line_is_logged_not_raised(caplog, monkeypatch):
    sink = EmfMetrics()
    sink.add(MESSAGES_SENT, ORDERS)

    def broken(*args, **kwargs):
        raise RuntimeError("cannot print")

    monkeypatch.setattr(EmfMetrics, "_print", broken)
    sink.flush()
    assert "metrics lost" in caplog.text
