"""What each front door writes to logs, priced (`bench/all_in.py`, `bench/log_bytes.py`): the functions' lines per
invocation at every door, the HTTP API's access log line per request in CloudWatch Logs, the ALB's access log gzipped
in S3, nothing per request at the wait tier."""

from __future__ import annotations

import random

import pytest

from bench import all_in, front_doors, log_bytes
from bench.cost_model import MEMORY_MB, Operation, Usage
from infra.observability import LogSettings

GB = 1024**3


def one_of_each(**origin: int) -> Usage:
    """A million messages, one request of each kind per message; `origin`: invocations of each kind, coalesced."""
    used = Usage(messages=1_000_000)
    for op in used.operations.values():
        op.requests = op.metered_requests = 1_000_000
    if origin:
        used.origin = {op: Operation(requests=origin.get(op, 0)) for op in MEMORY_MB}
    return used


OBSERVED = all_in.Observability(
    log_bytes={"send": 300.0, "receive": 300.0, "delete": 300.0},
    tracing=False,
    access_log_bytes={"send": 200.0, "receive": 200.0, "delete": 300.0},
    alb_log_bytes={"send": 70.0, "receive": 70.0, "delete": 140.0},
)
CLOUDWATCH_GB = 0.50 + 0.03  # ingested, and a month stored


def test_the_http_apis_access_log_line_is_billed_at_the_http_api_only():
    used = one_of_each()
    functions = 900 / GB * CLOUDWATCH_GB * 1e6
    assert all_in.logs_per_million(used, OBSERVED, "http-api") == pytest.approx(
        functions + 700 / GB * CLOUDWATCH_GB * 1e6
    )
    assert all_in.logs_per_million(used, OBSERVED, "alb") == pytest.approx(functions)
    assert all_in.logs_per_million(used, OBSERVED, "wait-tier") == pytest.approx(functions)


def test_the_albs_access_log_is_stored_gzipped_in_s3_for_the_buckets_90_days():
    used = one_of_each()
    assert all_in.alb_logs_per_million(used, OBSERVED) == pytest.approx(280 / GB * 0.023 * 3 * 1e6)
    alb = all_in.extras(used, OBSERVED, "alb")
    assert alb["ALB access logs (S3)"] > 0
    assert all_in.extras(used, OBSERVED, "http-api")["ALB access logs (S3)"] == 0
    assert all_in.extras(used, OBSERVED, "wait-tier")["ALB access logs (S3)"] == 0
    # each node's public IPv4 address: 2 x $0.005 an hour
    assert front_doors.fixed_month("alb")["public IPv4 addresses (2)"] == pytest.approx(2 * 0.005 * 730)
    # each node's file every 5 minutes: 2 x 12 x 730 PUTs at $0.005 per 1,000
    assert front_doors.fixed_month("alb")[next(k for k in front_doors.fixed_month("alb") if "PUT" in k)] == (
        pytest.approx(2 * 12 * 730 * 0.005 / 1000)
    )


def test_the_functions_lines_are_billed_per_invocation_when_calls_are_coalesced():
    """16 single sends in one batch call: one invocation's lines; the access log (HTTP API) still one per request."""
    coalesced = one_of_each(send=62_500, receive=1_000_000, delete=1_000_000)
    saved = (1_000_000 - 62_500) * 300 / GB * CLOUDWATCH_GB
    assert all_in.logs_per_million(one_of_each(), OBSERVED, "wait-tier") - all_in.logs_per_million(
        coalesced, OBSERVED, "wait-tier"
    ) == pytest.approx(saved)


def test_the_door_bytes_of_a_request_are_the_access_line_at_the_http_api_and_nothing_elsewhere():
    request = log_bytes.RequestLines("send", [log_bytes.Line("application", "INFO", '{"_aws": {}}')])
    settings = LogSettings()
    access = log_bytes.access_line("send", settings.access_log_fields).billed
    assert request.door_bytes(settings, "http-api") == access
    assert request.door_bytes(settings, "alb") == request.door_bytes(settings, "wait-tier") == 0
    assert request.billed_bytes(settings) == request.function_bytes(settings) + access


def test_an_alb_entry_is_in_albs_documented_format_and_its_gzipped_size_is_measured():
    entry = log_bytes.alb_entry("delete", random.Random(1))
    fields = entry.split(" ")
    assert fields[0] == "http" and fields[4] == "-"  # type; a Lambda target has no address
    assert '"DELETE http://' in entry and "ReceiptHandle=" in entry and '"forward"' in entry
    gzipped = log_bytes.alb_gzipped_bytes(entries=500)
    # compressed, but the handles' and ids' entropy stays: a delete's entry (its handle) takes more than a send's
    assert 0 < gzipped["send"] < len(log_bytes.alb_entry("send", random.Random(2)))
    assert gzipped["delete"] > gzipped["send"]
