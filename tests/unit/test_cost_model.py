"""The arithmetic of the message cost benchmark (`bench/cost_model.py`): prices applied to counted work, SQS's
chunked requests, the break-even utilisation of provisioned capacity."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bench import cost_model
from bench.cost_model import Operation, Usage


def usage(**counts: float) -> Usage:
    used = Usage(messages=1_000_000, **counts)  # type: ignore[arg-type]
    for op in used.operations.values():  # one request of each kind per message, no DynamoDB call, small payloads
        op.requests = op.metered_requests = 1_000_000
    return used


def test_dynamodb_on_demand_is_priced_per_unit_table_and_index_alike():
    parts = cost_model.per_million(usage(write_units=3e6, index_write_units=4e6, read_units=2e6))
    assert parts["DynamoDB writes"] == pytest.approx(7 * 0.625)
    assert parts["DynamoDB reads"] == pytest.approx(2 * 0.125)


def test_http_api_requests_are_metered_per_512_kb():
    op = Operation()
    for size in (100, 512 * 1024, 512 * 1024 + 1):
        op.count(2, size)
    assert (op.requests, op.dynamodb_calls, op.metered_requests) == (3, 6, 4)
    assert cost_model.per_million(usage())["HTTP API"] == pytest.approx(3.00)  # send, receive, delete: $1 each


def test_lambda_bills_requests_and_the_modelled_duration_at_each_routes_memory():
    parts = cost_model.per_million(usage())
    share = {op: memory / cost_model.VCPU_MEMORY_MB for op, memory in cost_model.MEMORY_MB.items()}
    gb = {op: memory / 1024 for op, memory in cost_model.MEMORY_MB.items()}
    # no DynamoDB call: each request bills its handler's CPU, slowed to the function's share of a vCPU
    duration = sum(
        cost_model.HANDLER_CPU_FULL_VCPU_MS[op] / share[op] / 1000 * gb[op] * cost_model.LAMBDA_ARM_GB_SECOND * 1e6
        for op in gb
    )
    assert parts["Lambda"] == pytest.approx(3 * 0.20 + duration)
    # each DynamoDB call adds its CPU at the function's share of a vCPU and a round trip
    cpu = cost_model.HANDLER_CPU_FULL_VCPU_MS["send"] + 2 * cost_model.CPU_PER_CALL_FULL_VCPU_MS
    expected = (cpu / share["send"] + 2 * cost_model.LATENCY_PER_CALL_MS) / 1000
    assert cost_model.lambda_seconds("send", 2) == pytest.approx(expected)


def test_a_function_given_less_memory_bills_its_cpu_for_longer():
    """CPU time stretches with a smaller share of a vCPU; the round trips do not; beyond a full vCPU nothing gains."""
    small, full = dict(cost_model.MEMORY_MB), dict(cost_model.MEMORY_MB)
    small["send"], full["send"] = 128, 3538
    cpu = cost_model.HANDLER_CPU_FULL_VCPU_MS["send"] + cost_model.CPU_PER_CALL_FULL_VCPU_MS
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(cost_model, "MEMORY_MB", small)
        at_128 = cost_model.lambda_seconds("send", 1)
        patch.setattr(cost_model, "MEMORY_MB", full)
        at_two_vcpus = cost_model.lambda_seconds("send", 1)
    assert at_128 * 1000 == pytest.approx(cpu * cost_model.VCPU_MEMORY_MB / 128 + cost_model.LATENCY_PER_CALL_MS)
    assert at_two_vcpus * 1000 == pytest.approx(cpu + cost_model.LATENCY_PER_CALL_MS)


def test_a_batch_call_bills_its_handlers_cpu_per_message_beyond_the_first():
    share = cost_model.MEMORY_MB["receive"] / cost_model.VCPU_MEMORY_MB
    batch = Operation()
    batch.count(3, 16 * 1500, messages=16, batch=True)
    single = Operation()
    single.count(3, 1500)
    extra = 15 * cost_model.HANDLER_CPU_PER_MESSAGE_FULL_VCPU_MS["receive"] / share / 1000
    assert (batch.messages, single.messages) == (16, 1)
    assert cost_model.invocation_seconds("receive", batch) == pytest.approx(
        cost_model.invocation_seconds("receive", single) + extra
    )
    assert extra > 0
    # a receive that found nothing bills a single request's handling, not less
    empty = Operation()
    empty.count(3, 500, messages=0)
    assert cost_model.invocation_seconds("receive", empty) == pytest.approx(
        cost_model.invocation_seconds("receive", single)
    )


def test_the_models_cpu_figures_are_those_the_cpu_bench_wrote():
    """The constants cite bench/results/lambda_cpu.md: its per-call figure, and per operation the single form's
    handler CPU and (batch less single) / 15."""
    text = (Path(__file__).resolve().parents[2] / "bench" / "results" / "lambda_cpu.md").read_text()
    per_call = re.search(r"per-call CPU \(`CPU_PER_CALL_FULL_VCPU_MS`\): \*\*([\d.]+) ms", text)
    assert per_call is not None
    assert cost_model.CPU_PER_CALL_FULL_VCPU_MS == pytest.approx(float(per_call.group(1)), abs=0.005)
    rows = {row[0]: row for row in (line.strip("|").split("|") for line in text.splitlines()) if len(row) == 6}
    handler = {
        form.strip(): float(row[5].strip(" *"))
        for form, row in rows.items()
        if form.strip() in ("send", "receive", "delete", "batch send", "batch receive", "batch delete")
    }
    for op in cost_model.MEMORY_MB:
        assert cost_model.HANDLER_CPU_FULL_VCPU_MS[op] == pytest.approx(handler[op], abs=0.005)
        per_message = (handler[f"batch {op}"] - handler[op]) / 15
        assert cost_model.HANDLER_CPU_PER_MESSAGE_FULL_VCPU_MS[op] == pytest.approx(per_message, abs=0.005)


def test_storage_is_priced_for_the_time_a_message_stays():
    parts = cost_model.per_million(usage(stored_bytes=1024**3 / 1e6))  # a GB for a million messages
    assert parts["storage"] == pytest.approx(0.25 * cost_model.RESIDENCE_HOURS / 730)


def test_the_wait_tier_adds_its_wasted_origin_calls_and_no_wake_post_for_a_life_through_it():
    """With the tier a message's send, receive and delete come through it, and their wakes go back in their answers
    (bench/results/wait_tier.md: 0.00 wake posts a message sent through the tier): no HTTP API request for a wake."""
    plain, tier = cost_model.per_million(usage(wakes=1_000_000)), cost_model.per_million(usage(wakes=1_000_000), True)
    assert "wait tier" not in plain
    call = cost_model.LAMBDA_REQUEST + cost_model.ORIGIN_CALL_SECONDS * cost_model.MEMORY_MB["receive"] / 1024 * (
        cost_model.LAMBDA_ARM_GB_SECOND
    )
    wasted = 0.13 * (call + 0.5 * cost_model.READ_UNIT) * 1e6  # 0.13 wasted origin calls a message, 0.5 units each
    assert tier["wait tier"] == pytest.approx(wasted)
    assert tier["wait tier"] == pytest.approx(cost_model.per_million(usage(wakes=0), True)["wait tier"])


@pytest.mark.parametrize(
    ("body", "batch", "fifo", "expected"),
    [
        (1024, 1, False, 1.20),  # send, receive, delete: 3 requests
        (1024, 16, False, 0.12),  # batches of 10: 0.3 requests a message
        (1024, 16, True, 0.15),
        (60 * 1024, 16, False, 0.84),  # 600 KB a batch: 10 chunks to send, 10 to receive, 1 delete
        (60 * 1024, 1, False, 1.20),
    ],
)
def test_sqs_bills_requests_of_ten_messages_per_64_kb_chunk(body, batch, fifo, expected):
    assert cost_model.sqs_per_million(body, batch, fifo) == pytest.approx(expected)


def test_provisioned_capacity_breaks_even_with_on_demand_near_29_percent_used():
    even = cost_model.break_even_utilisation()
    assert even["writes"] == pytest.approx(0.00065 * 1e6 / 3600 / 0.625)
    assert 0.28 < even["writes"] < 0.30 and even["reads"] == pytest.approx(even["writes"])
    assert cost_model.provisioned_per_million(0.00065, even["writes"]) == pytest.approx(0.625)


# --- capacity as a dimension of the price (`-c capacity=provisioned`) ------------------------------------------------


def test_provisioned_capacity_is_priced_per_unit_hour_at_the_stacks_auto_scaling_target():
    """7 write units (3 table, 4 ready index) and 2 read units (0.5 of them the index's) a message, steady: auto-
    scaling keeps consumed / 70 % provisioned, billed at $0.00065 per WCU-hour and $0.00013 per RCU-hour."""
    from infra.table_capacity import Provisioned

    assert cost_model.stack_provisioning().target_percent == Provisioned().target_percent == 70
    used = usage(write_units=3e6, index_write_units=4e6, read_units=2e6, index_read_units=0.5e6)
    parts = cost_model.per_million(used, capacity="provisioned")
    # a unit consumed each second for an hour needs 1 / 0.70 units provisioned for that hour
    assert parts["DynamoDB writes"] == pytest.approx(7 * 1e6 / 3600 / 0.70 * 0.00065)  # $1.806
    assert parts["DynamoDB reads"] == pytest.approx(2 * 1e6 / 3600 / 0.70 * 0.00013)  # $0.103
    split = cost_model.dynamodb_per_million(used, "provisioned")
    assert split["table writes"] == pytest.approx(3 * 1e6 / 3600 / 0.70 * 0.00065)
    assert split["ready index writes"] == pytest.approx(4 * 1e6 / 3600 / 0.70 * 0.00065)
    assert split["table reads"] == pytest.approx(1.5 * 1e6 / 3600 / 0.70 * 0.00013)
    assert split["ready index reads"] == pytest.approx(0.5 * 1e6 / 3600 / 0.70 * 0.00013)
    on_demand = cost_model.dynamodb_per_million(used, "on demand")
    assert on_demand == pytest.approx(
        {
            "table writes": 3 * 0.625,
            "ready index writes": 4 * 0.625,
            "table reads": 1.5 * 0.125,
            "ready index reads": 0.5 * 0.125,
        }
    )
    with pytest.raises(ValueError, match="capacity"):
        cost_model.unit_price("reserved", True)


def test_the_provisioned_price_follows_the_target_the_stack_is_configured_with(monkeypatch):
    """The target utilisation is the stack's (`infra.table_capacity`, with cdk.json's context), not a copied number."""
    at_70 = cost_model.unit_price("provisioned", True)
    monkeypatch.setattr(cost_model, "stack_context", lambda: {"capacityTargetPercent": 35})
    assert cost_model.unit_price("provisioned", True) == pytest.approx(2 * at_70)


def test_a_run_prices_the_stack_deployed_with_the_context_it_chose():
    """`bench.message_patterns --context capacityTargetPercent=90` prices the stack deployed with `-c
    capacityTargetPercent=90`, for that run only."""
    at_70 = cost_model.unit_price("provisioned", True)
    with cost_model.deployed_with({"capacityTargetPercent": "90"}):
        assert cost_model.stack_provisioning().target_percent == 90
        assert cost_model.unit_price("provisioned", True) == pytest.approx(at_70 * 70 / 90)
    assert cost_model.stack_provisioning().target_percent == 70
    assert cost_model.unit_price("provisioned", True) == at_70


def test_auto_scalings_minimum_is_a_fixed_monthly_cost_of_each_table_and_index():
    from bench import all_in

    template = {
        "Resources": {
            "Messages": {
                "Type": "AWS::DynamoDB::Table",
                "Properties": {
                    "ProvisionedThroughput": {"ReadCapacityUnits": 5, "WriteCapacityUnits": 5},
                    "GlobalSecondaryIndexes": [
                        {
                            "IndexName": "receivable",
                            "ProvisionedThroughput": {"ReadCapacityUnits": 4, "WriteCapacityUnits": 6},
                        }
                    ],
                },
            },
            "OnDemand": {"Type": "AWS::DynamoDB::Table", "Properties": {"BillingMode": "PAY_PER_REQUEST"}},
        }
    }
    minimum = all_in.provisioned_minimum_month(template)
    assert minimum == pytest.approx(
        {
            "table Messages": (5 * 0.00065 + 5 * 0.00013) * 730,  # $2.85
            "index receivable of Messages": (6 * 0.00065 + 4 * 0.00013) * 730,
        }
    )


def test_only_the_part_of_auto_scalings_minimum_above_the_load_is_a_fixed_cost():
    """Auto-scaling keeps the larger of the load's capacity and its minimum: a table or index whose load keeps more
    than the minimum costs nothing fixed; one whose load keeps less, the rest of the minimum; one without load, all."""
    from bench import all_in

    def table(*indexes: str) -> dict[str, object]:
        five = {"ReadCapacityUnits": 5, "WriteCapacityUnits": 5}
        return {
            "Type": "AWS::DynamoDB::Table",
            "Properties": {
                "ProvisionedThroughput": five,
                "GlobalSecondaryIndexes": [{"IndexName": i, "ProvisionedThroughput": five} for i in indexes],
            },
        }

    template = {"Resources": {"Messages": table("receivable"), "Meta": table()}}
    names = all_in.message_table_names(template, "receivable")
    assert names == ("table Messages", "index receivable of Messages")
    # the table's load keeps 815 WCU and 51 RCU; the index's 3 WCU and no read
    minimum = all_in.provisioned_minimum_month(template, dict(zip(names, [(815, 51), (3, 0)], strict=True)))
    assert minimum == pytest.approx(
        {
            "table Messages": 0.0,
            "index receivable of Messages": (2 * 0.00065 + 5 * 0.00013) * 730,
            "table Meta": (5 * 0.00065 + 5 * 0.00013) * 730,  # no load: the whole minimum, $2.85
        }
    )
    used = Usage(messages=1000, write_units=3000, index_write_units=500, read_units=900, index_read_units=200)
    kept = all_in.kept_capacity(used, lifecycles_per_second=7, target=0.7)
    assert kept["table"] == pytest.approx((30, 7)) and kept["index"] == pytest.approx((5, 2))


# --- Lambda per invocation: coalesced calls ---------------------------------------------------------------------------


def test_lambda_bills_each_invocation_with_the_handling_of_every_request_it_carries():
    """16 single sends coalesced into one invocation of 1 DynamoDB call: one Lambda request, 16 requests' handling."""
    share = cost_model.MEMORY_MB["send"] / cost_model.VCPU_MEMORY_MB
    per_call = cost_model.CPU_PER_CALL_FULL_VCPU_MS / share + cost_model.LATENCY_PER_CALL_MS
    handling = 16 * cost_model.HANDLER_CPU_FULL_VCPU_MS["send"] / share
    assert cost_model.lambda_seconds("send", 1, 16) == pytest.approx((handling + per_call) / 1000)
    alone = Usage(messages=16)
    alone.operations["send"].requests = 16
    alone.operations["send"].dynamodb_calls = 16
    coalesced = Usage(messages=16, origin={op: Operation() for op in cost_model.MEMORY_MB})
    coalesced.operations["send"].requests = 16
    coalesced.origin["send"].count(1, 16 * 1200, carried=16)  # type: ignore[index]
    gb_second = cost_model.MEMORY_MB["send"] / 1024 * cost_model.LAMBDA_ARM_GB_SECOND
    expected = (0.20 / 1e6 + cost_model.lambda_seconds("send", 1, 16) * gb_second) / 16 * 1e6
    assert cost_model.lambda_per_million(coalesced) == pytest.approx(expected)
    assert cost_model.lambda_per_million(coalesced) < cost_model.lambda_per_million(alone) / 5


# --- the message table's export and the backlog snapshot --------------------------------------------------------------


def test_the_message_table_is_not_exported_by_default_and_its_exports_are_priced_beside():
    """A message storing 2 KB for an hour and leaving 16 KB for 4 days, its writes 6 units of the table's: the full
    export sees it in one export of the day's share of its stored hour, and four of what it leaves; the incremental one
    processes its writes' items (a KB per unit); the default (`backlogSnapshot=counts`) exports nothing."""
    from bench import all_in

    used = Usage(
        messages=1000, write_units=6000, index_write_units=9000, stored_bytes=2048, left_bytes=16384
    )  # per message: index writes are not exported
    used.retention_seconds = 4 * 86400
    gb = 1024**3
    full = (2048 / 24 + 16384 * 4) / gb * (0.10 + 0.023) * 1e6
    incremental = 6 * 1024 / gb * (0.10 + 0.023) * 1e6
    assert all_in.message_table_export_per_million(used, "full") == pytest.approx(full)
    assert all_in.message_table_export_per_million(used, "incremental") == pytest.approx(incremental)
    assert all_in.export_per_million(used, "export") == pytest.approx(full)
    assert all_in.export_per_million(used) == 0.0 == all_in.extras(used, all_in.Observability({}, False))["exports"]
    with pytest.raises(ValueError):
        all_in.message_table_export_per_million(used, "differential")


def test_the_backlog_snapshot_costs_each_queue_its_reads_and_time_once_a_day():
    from bench import all_in

    per_run = 51.5 * 0.125 / 1e6 + 0.0028 * 1769 / 1024 * cost_model.LAMBDA_ARM_GB_SECOND
    assert all_in.snapshot_month(500) == pytest.approx(30 * (500 * per_run + 0.20 / 1e6 + 0.005 / 1000))
    assert all_in.snapshot_month(500) < 0.10  # under ten cents a month for the estate of 500 queues
