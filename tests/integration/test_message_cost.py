"""The message cost benchmark (`bench/message_cost.py`) run small: the recording client bills known items by
DynamoDB's size rules, the bodies are as compressible as they claim, and the measured cases add up (a busy queue's
receives read only its ready index; a 60 KB incompressible body costs at least its entropy in write units)."""

from __future__ import annotations

import random
import zlib

import pytest

from bench import cost_model
from bench.bodies import BODIES
from bench.message_cost import BATCH, Bench, Case
from local_runtime.tables import create_tables
from mnsd.ground.settings import Settings
from mnsd.storage.dynamodb.layout import INDEX_KEY
from tests.recording import Recorder, RecordingClient


def test_bodies_compress_as_named():
    rng = random.Random(1)
    for name, make in BODIES.items():
        body = make(rng).encode()
        ratio = len(body) / len(zlib.compress(body))
        if "JSON" in name:
            assert 1.3 < ratio < 4, ratio  # JSON compresses some (700 repeated characters would be 40x)
        else:
            assert ratio < 1.35, (name, ratio)  # base64 of random bytes: only base64's 4/3 comes back
    assert [len(make(rng)) for make in BODIES.values()] == [64, 1024, 1024, 60 * 1024]


def test_the_recording_client_bills_items_by_their_size_index_entries_included(dynamodb):
    settings = Settings()
    create_tables(dynamodb, settings)
    recorder = Recorder()
    client = RecordingClient(dynamodb, recorder)
    table = settings.message_table
    key = {"pk": {"S": "q"}, "sk": {"S": "L1"}}  # 1 + 1 + 2 + 2 bytes of names and values
    client.put_item(TableName=table, Item={**key, "b": {"S": "x" * (1025 - 6 - 1)}})  # 1,025 bytes: 2 units
    client.update_item(
        TableName=table,
        Key=key,
        UpdateExpression="SET b = :b, #w = :w",
        ExpressionAttributeNames={"#w": INDEX_KEY},
        ExpressionAttributeValues={":b": {"S": "y" * 3000}, ":w": {"N": "5"}},
    )  # 3,000 + bytes: 3 units, and the item enters the ready index (keys and `w`, plus 100 bytes: 1 unit)
    client.transact_write_items(TransactItems=[{"Delete": {"TableName": table, "Key": key}}])  # 2 x 3 units
    put, update, delete = recorder.calls
    assert (put.wcu, put.index_wcu) == (2, 0)
    assert (update.wcu, update.index_wcu) == (3, 1)
    assert (delete.wcu, delete.index_wcu) == (6, 1)


@pytest.fixture(scope="module")
def measured():
    bench = Bench()
    try:
        cases = [
            Case("64 B", BATCH, "standard, indexed"),
            Case("1 KB incompressible", BATCH, "standard, indexed"),
            Case("60 KB incompressible", 1, "standard, quiet"),
            Case("60 KB incompressible", BATCH, "standard, quiet"),
        ]
        yield {case: bench.measure(case, 1) for case in cases}
    finally:
        bench.close()


def test_a_busy_queue_reads_only_its_ready_index_and_pays_its_writes(measured):
    usage, only_index = measured[Case("64 B", BATCH, "standard, indexed")]
    assert only_index
    assert usage.messages == BATCH and usage.index_write_units > 0
    assert {name: op.requests for name, op in usage.operations.items()} == {"send": 1, "receive": 1, "delete": 1}
    assert usage.wakes >= 1


def test_a_large_incompressible_body_costs_at_least_its_entropy_and_the_parts_add_up(measured):
    usage, only_index = measured[Case("60 KB incompressible", 1, "standard, quiet")]
    assert not only_index  # a quiet queue reads its leases from the table
    # base64 of 45 KB of random bytes compresses to no less: stored, then read back at least once
    assert usage.write_units >= 45 and usage.read_units >= 45 / 4 / 2
    assert usage.stored_bytes >= 45 * 1024
    assert usage.left_bytes >= 45 * 1024  # its body item outlives the delete until TTL
    parts = cost_model.per_million(usage)
    assert parts["DynamoDB writes"] == pytest.approx(usage.write_units * 0.625)
    assert parts["HTTP API"] == pytest.approx(3.00)  # 60 KB is under the 512 KB metering step


def test_a_batch_of_60_kb_bodies_is_sent_as_mns_takes_it_one_per_request(measured):
    """MNS refuses a BatchSendMessage over 64 KB of bodies: sixteen 60 KB bodies are sixteen sends (received and
    deleted in one batch each)."""
    usage, _ = measured[Case("60 KB incompressible", BATCH, "standard, quiet")]
    assert {name: op.requests for name, op in usage.operations.items()} == {"send": BATCH, "receive": 1, "delete": 1}
    assert usage.operations["send"].metered_requests == BATCH


@pytest.mark.parametrize(("body", "bound"), [("64 B", 0.60), ("1 KB incompressible", 1.10)])
def test_a_busy_queues_batches_of_16_cost_cents_per_million_all_in(measured, body, bound):
    """Packed batches on an indexed queue (issue "a busy queue for cents"): at most $0.60 and $1.10 per million
    messages all-in (HTTP API, Lambda, DynamoDB, storage), from $4.77 and $5.26 one lease per message."""
    usage, _ = measured[Case(body, BATCH, "standard, indexed")]
    assert sum(cost_model.per_million(usage).values()) <= bound
