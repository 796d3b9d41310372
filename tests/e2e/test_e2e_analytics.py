"""The analytics pipeline end to end: SDK calls on LoggingEnabled resources, then
`python -m local_runtime.analytics` (export -> Glue jobs on local Spark -> Parquet), then the metrics
must equal the operations performed."""

from __future__ import annotations

import os
import subprocess
import time
import uuid

import duckdb
import pytest
from mns.queue import Message, QueueMeta
from mns.subscription import SubscriptionMeta
from mns.topic import TopicMessage, TopicMeta

from tests.support.jvm import QUICK_JVM
from tests.support.local_server import PYTHON, ROOT
from tests.support.servers import ACCOUNT_A

pytestmark = pytest.mark.slow


def parquet(folder, job: str) -> list[dict]:
    relation = duckdb.sql(f"SELECT * FROM read_parquet('{folder}/*/{job}/**/*.parquet', hive_partitioning = true)")
    return [dict(zip(relation.columns, row, strict=True)) for row in relation.fetchall()]


def test_operation_metrics_equal_the_operations_performed(account_a, endpoint, push_endpoint, tmp_path, server_clock):
    name = "an-" + uuid.uuid4().hex[:12]
    meta = QueueMeta()
    meta.set_logging_enabled(True)
    queue = account_a.get_queue(name)
    queue.create(meta)
    for i in range(3):
        queue.send_message(Message(f"m{i}"))
    first = [queue.receive_message(1) for _ in range(3)]  # three first receives
    queue.change_message_visibility(first[0].receipt_handle, 1)
    server_clock.advance(1.2)
    again = queue.receive_message(3)  # the redelivery of first[0], the only Active message
    assert again.dequeue_count == 2 and again.message_id == first[0].message_id
    for handle in (again.receipt_handle, first[1].receipt_handle, first[2].receipt_handle):
        queue.delete_message(handle)
    queue.send_message(Message("m3"))  # left in the queue

    topic_meta = TopicMeta()
    topic_meta.set_logging_enabled(True)
    topic = account_a.get_topic(name)
    topic.create(topic_meta)
    push_endpoint.status_for = lambda n: 500 if n == 1 else 204
    topic.get_subscription("hook").subscribe(SubscriptionMeta(push_endpoint.url("/hook"), "EXPONENTIAL_DECAY_RETRY"))
    topic.publish_message(TopicMessage("a"))  # fails first, delivered by the first retry
    push_endpoint.wait_for(1, timeout=10)
    topic.publish_message(TopicMessage("b"))  # delivered at once
    push_endpoint.wait_for(3, timeout=15)
    time.sleep(1.0)  # the stream reader and the push worker write their last records

    out = tmp_path / "analytics"
    command = [str(PYTHON), "-m", "local_runtime.analytics", "--endpoint", endpoint, "--out", str(out)]
    operator = {"MNS_CREDENTIALS": ":".join(ACCOUNT_A)}  # the export is the operator's tool: signed with its key
    env = {**os.environ, **operator, "JAVA_TOOL_OPTIONS": QUICK_JVM}  # (Spark's JVMs: tests/support/jvm.py)
    finished = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert finished.returncode == 0, finished.stderr[-3000:]
    assert "queue_hourly" in finished.stdout

    (hourly,) = [row for row in parquet(out, "queue_hourly") if row["queue"] == name]
    assert (hourly["sends"], hourly["receives"], hourly["deletes"], hourly["redeliveries"]) == (4, 4, 3, 1)
    assert hourly["expired"] == 0
    (pushes,) = [row for row in parquet(out, "subscription_hourly") if row["topic"] == name]
    assert (pushes["deliveries"], pushes["first_try_successes"], pushes["retries"], pushes["drops"]) == (2, 1, 1, 0)
    (backlog,) = [row for row in parquet(out, "backlog_snapshot") if row["queue"] == name]
    assert (backlog["active"], backlog["inactive"], backlog["delayed"]) == (1, 0, 0)  # m3 was never received
