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
from mnsd.storage.dynamodb.items.layout import INDEX_KEY
from tests.support.recording import Recorder, RecordingClient


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
        return {case: bench.measure(case, 1) for case in cases}
    finally:
        bench.close()  # (before the other benches of this module make moto's tables again)


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


# --- clients' patterns, all-in (`bench/message_patterns.py`) -------------------------------------------------


@pytest.fixture(scope="module")
def log_lines():
    from bench import log_bytes

    return log_bytes.measure(rounds=2)


def test_the_stacks_log_settings_write_no_platform_line_and_no_line_per_request(log_lines):
    """A request's logs at the stack's settings: its EMF metric line and the access log line, about 0.5 KB, where
    the previous settings wrote START / END / REPORT, a log line per request and a metric line per request besides."""
    from infra.observability import LogSettings

    for operation, request in log_lines.items():
        kept = request.lines(LogSettings())
        assert [line.source for line in kept] == ["application", "access"], operation
        assert kept[0].is_metrics  # the queue's counts: Lambda takes a line without a level for INFO, and keeps it
        assert request.billed_bytes(LogSettings()) < 600
        before = request.lines(LogSettings.previous())
        assert {line.source for line in before} == {"application", "platform", "access"}
        assert request.billed_bytes(LogSettings.previous()) > 2.5 * request.billed_bytes(LogSettings())
        assert request.billed_bytes(LogSettings(), monitored=False) < request.billed_bytes(LogSettings())


def test_a_successful_request_prints_no_service_level_metric_line(log_lines):
    """Only failed calls count themselves in the service-level metrics (API Gateway and Lambda count requests)."""
    for request in log_lines.values():
        metric_lines = [line.text for line in request.printed if line.is_metrics]
        assert metric_lines and all('"service"' not in text for text in metric_lines)


@pytest.fixture(scope="module")
def patterns():
    from bench.capacity import no_real_sleeps
    from bench.message_patterns import PATTERNS, measure

    no_real_sleeps()
    return {name: measure(pattern, "1 KB incompressible", 32) for name, pattern in PATTERNS.items()}


def test_racing_clients_are_measured_with_their_lost_claims_and_every_request(patterns):
    from bench.message_patterns import PATTERNS

    for name, usage in patterns.items():
        pattern = PATTERNS[name]
        ops = usage.operations
        assert ops["send"].requests * pattern.send_batch == usage.messages, name
        assert ops["delete"].requests == (usage.messages if pattern.delete_alone else usage.messages // BATCH), name
        assert ops["receive"].requests >= usage.messages / pattern.receive_batch, name
    racing = patterns["one at a time, 16 producers + 16 consumers"]
    alone = patterns["one at a time, one client"]
    assert alone.lost_claims == 0
    # racing consumers lose claims and retry: more DynamoDB calls and reads per message than one client's
    assert racing.per_message(racing.read_units) > alone.per_message(alone.read_units)
    assert sum(o.dynamodb_calls for o in racing.operations.values()) > sum(
        o.dynamodb_calls for o in alone.operations.values()
    )


def test_all_in_prices_every_item_and_the_front_doors_apart(patterns, log_lines):
    from bench import all_in, front_doors
    from bench.pattern_prices import observability, price
    from bench.wire import Wire
    from infra.observability import LogSettings

    usage = patterns["one at a time, one client"]
    forms = [(op, batch) for op in ("send", "receive", "delete") for batch in (False, True)]
    body = {form: 0.0 if form[0] == "delete" else 1.0 for form in forms}  # a delete carries no body
    wire = {
        side: Wire(dict.fromkeys(forms, fixed), dict.fromkeys(forms, 0.0), body, {})
        for side, fixed in (("clients", 700.0), ("functions", 1100.0))
    }
    stack = observability(LogSettings(), log_lines, wire)
    previous = observability(LogSettings.previous(), log_lines, wire)
    http = price(usage, "http-api", stack)
    alb = price(usage, "alb", stack)
    assert http.parts["front door (http-api)"] == pytest.approx(3.00)
    # every request single, carrying one message: 3 requests a message each side, the body each way it travels
    assert all(op.forms == {(False, 1): usage.messages} for op in usage.operations.values())
    carried = 3 * (700 + 1100) + 2 * 2 * usage.body_bytes
    assert alb.parts["front door (alb)"] == pytest.approx(carried / 0.4e9 * 0.008 * 1e6)  # 0.4 GB an LCU-hour
    # the doors differ by their fee and their logs: the HTTP API's access log line in CloudWatch, the ALB's in S3
    assert http.parts["CloudWatch Logs"] > alb.parts["CloudWatch Logs"] > 0
    assert alb.parts["ALB access logs (S3)"] > 0 == http.parts["ALB access logs (S3)"]
    logs = ("CloudWatch Logs", "ALB access logs (S3)")
    assert http.total - alb.total == pytest.approx(
        3.00 - alb.parts["front door (alb)"] + sum(http.parts[n] for n in logs) - sum(alb.parts[n] for n in logs)
    )
    tier = price(usage, "wait-tier", stack)
    assert tier.parts["CloudWatch Logs"] == pytest.approx(alb.parts["CloudWatch Logs"])  # the functions' lines only
    assert front_doors.fixed_month("alb")["Application Load Balancer (hours)"] == pytest.approx(0.0225 * 730)
    # provisioned at the stack's auto-scaling target, DynamoDB's units cost less than on demand at any steady load
    provisioned = price(usage, "http-api", stack, "provisioned")
    assert provisioned.parts["DynamoDB writes"] == pytest.approx(
        http.parts["DynamoDB writes"] * 0.00065 / 3600 / 0.70 / (0.625 / 1e6)
    )
    assert provisioned.total < http.total
    assert price(usage, "http-api", previous).parts["X-Ray"] == pytest.approx(3 * 0.05 * 5.00)
    assert http.parts["X-Ray"] == 0
    assert 0 < http.parts["CloudWatch Logs"] < price(usage, "http-api", previous).parts["CloudWatch Logs"] / 2
    batches = patterns["whole batches of 16"]
    # a batch's bodies outlive their delete until TTL: in one export a day of the queue's retention period
    days = batches.retention_seconds / 86400
    assert days >= 1 and all_in.exported_gb(batches) >= batches.left_bytes * days / 1024**3


def test_coalesced_single_calls_reach_the_origin_as_fewer_invocations_and_writes(patterns):
    """The wait tier's coalescing run with the pattern's threads: the same client requests, fewer invocations (batch
    calls), sends stored as packs; every message received once (`measure` checks it)."""
    from bench import cost_model

    alone = patterns["one at a time, 16 producers + 16 consumers"]
    coalesced = patterns["one at a time, 16 producers + 16 consumers, coalesced"]
    assert alone.origin is None and coalesced.origin is not None
    for op in ("send", "receive", "delete"):
        assert coalesced.operations[op].requests == alone.operations[op].requests == coalesced.messages
        assert coalesced.invocations[op].requests < coalesced.operations[op].requests, op
        assert coalesced.invocations[op].carried == coalesced.messages, op  # each request carried once
        sizes = coalesced.batch_sizes[op]
        assert sum(sizes) == coalesced.messages and max(sizes) > 1 and max(sizes) <= 16, op
    assert coalesced.per_message(coalesced.write_units + coalesced.index_write_units) < alone.per_message(
        alone.write_units + alone.index_write_units
    )
    assert cost_model.lambda_per_million(coalesced) < cost_model.lambda_per_million(alone)
    deletes = patterns["receive 16, delete each alone, 16 consumers, coalesced"]
    assert "receive" not in deletes.batch_sizes  # a receive of 16 is passed on alone
    assert deletes.invocations["delete"].requests < deletes.operations["delete"].requests
