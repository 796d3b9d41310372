"""The load balancer door's per-request bill (`bench.front_doors`): LCU-hours as ALB defines them, the largest of its
dimensions in an hour; the rules a message's request goes through (none billed) and the bytes its request forms carry
(`bench.wire`), on both sides of the load balancer; the connections' dimensions only above the requests'."""

from __future__ import annotations

import pytest

from bench import front_doors
from bench.cost_model import Operation, Usage
from bench.wire import Wire, fit

FORMS = [(op, batch) for op in ("send", "receive", "delete") for batch in (False, True)]


def model(fixed: float, per_message: float) -> Wire:
    """Every form `fixed` bytes and `per_message` beyond each body; sends and receives carry their bodies."""
    body = {form: 0.0 if form[0] == "delete" else 1.0 for form in FORMS}
    return Wire(
        dict.fromkeys(FORMS, fixed),
        dict.fromkeys(FORMS, per_message),
        body,
        {("receive", False): 800.0, ("receive", True): 850.0},
    )


WIRE = {"clients": model(700, 0), "functions": model(1100, 0)}


def lifecycles(messages: int, body: int = 1024) -> Usage:
    """`messages` sent, received and deleted one at a time, each request one DynamoDB call."""
    used = Usage(messages=messages, body_bytes=body)
    for op in used.operations.values():
        for _ in range(messages):
            op.count(1, body)
    return used


def test_a_message_routes_request_goes_through_rules_of_the_first_10_and_none_is_billed() -> None:
    assert {op: front_doors.rules_processed(op) for op in front_doors.METHODS} == {"send": 1, "receive": 6, "delete": 3}
    assert front_doors.alb_lcu_hours(lifecycles(1000), WIRE)["rule evaluations"] == 0


def test_the_door_bills_the_bytes_both_sides_of_the_load_balancer_carry_at_04_gb_an_lcu_hour() -> None:
    used = lifecycles(1000)
    # a lifecycle: send and receive carry the body each way it travels, delete none; 3 requests a side
    lifecycle = 3 * 700 + 2 * 1024 + 3 * 1100 + 2 * 1024
    assert front_doors.processed_bytes(used, WIRE) == pytest.approx(
        {"clients": 1000 * (3 * 700 + 2 * 1024), "functions": 1000 * (3 * 1100 + 2 * 1024)}
    )
    assert front_doors.per_million(used, "alb", WIRE) == pytest.approx(lifecycle / 0.4e9 * 0.008 * 1e6)
    with pytest.raises(ValueError):
        front_doors.per_million(used, "alb")  # not priced without the measured bytes


def test_a_batch_carries_each_messages_part_and_body_and_an_empty_receive_its_error() -> None:
    wire = Wire({("send", True): 900.0}, {("send", True): 200.0}, {("send", True): 1.0}, {("receive", True): 850.0})
    assert wire.carried("send", True, 16, 1024) == 900 + 16 * (200 + 1024)
    assert WIRE["clients"].carried("receive", True, 0, 1024) == 850.0
    used = Usage(messages=16, body_bytes=64)
    used.operations["send"].count(1, 0, messages=16, batch=True)
    used.operations["receive"].count(1, 0, messages=0, batch=True)  # found nothing
    used.operations["receive"].count(1, 0, messages=16, batch=True)
    used.operations["delete"].count(1, 0, messages=16, batch=True)
    assert front_doors.processed_bytes(used, WIRE)["clients"] == pytest.approx(
        (700 + 16 * 64) + 850 + (700 + 16 * 64) + 700
    )


def test_with_the_wait_tier_behind_it_the_clients_bytes_are_billed_at_1_gb_an_lcu_hour() -> None:
    used = lifecycles(1000)
    used.origin = {op: Operation() for op in used.operations}  # coalesced: through the tier's tasks (IP targets)
    clients = 1000 * (3 * 700 + 2 * 1024)
    assert front_doors.per_million(used, "alb", WIRE) == pytest.approx(clients / 1e9 * 0.008 * 1e6 / 1000)


def test_kept_alive_connections_add_only_what_their_dimensions_exceed_of_the_requests() -> None:
    used = lifecycles(1000)
    an_hour = 100_000  # lifecycles
    requests = front_doors.alb_lcu_hours(used, WIRE)["processed bytes"] / 1000 * an_hour
    assert front_doors.alb_connections_month(used, WIRE, an_hour, 1000) == 0  # 0.33 LCU of connections: bytes bill
    many = 3000 * 10 * requests
    assert front_doors.alb_connections_month(used, WIRE, an_hour, many) == pytest.approx(
        (many / 3000 - requests) * 0.008 * 730
    )
    assert front_doors.connections_lcu(3600 * 25) == {"active connections": 30.0, "new connections": 1.0}


def test_the_wire_model_is_fitted_from_two_counts_and_two_body_sizes() -> None:
    def measured(n: int, body: int) -> float:
        return 650 + n * (180 + body)

    points = {(n, body): measured(n, body) for n in (2, 16) for body in (64, 1024)}
    assert fit(points) == pytest.approx((650, 180, 1.0))
    single = {(1, body): 1100 + body for body in (64, 1024)}
    assert fit(single) == pytest.approx((1100, 0, 1.0))
