"""The report of `bench/message_patterns.py`: every figure labelled with its front door and capacity mode, each of
the issue's targets stated beside the figures with whether it is met."""

from __future__ import annotations

import re

from bench import all_in
from bench.cost_model import MEMORY_MB, Usage
from bench.cost_targets import PER_MILLION
from bench.message_report import door_label, targets
from bench.wire import Wire


def wire(fixed: float) -> Wire:
    forms = [(op, batch) for op in MEMORY_MB for batch in (False, True)]
    return Wire(dict.fromkeys(forms, fixed), dict.fromkeys(forms, 0.0), dict.fromkeys(forms, 1.0), {})


NO_LOGS = all_in.Observability({}, False, wire={"clients": wire(700), "functions": wire(1100)})


def lifecycles(calls_per_request: int) -> Usage:
    """256 messages sent, received and deleted one at a time, 7 write units each."""
    used = Usage(messages=256, write_units=3 * 256, index_write_units=4 * 256, read_units=0.7 * 256)
    for op in MEMORY_MB:
        used.operations[op].requests = used.operations[op].metered_requests = 256
        used.operations[op].carried = 256
        used.operations[op].dynamodb_calls = calls_per_request * 256
    return used


def test_each_target_is_stated_beside_every_doors_and_capacitys_figure_met_or_not():
    results = {(p, t.body): lifecycles(1) for t in PER_MILLION for p in t.patterns}
    table = targets(results, ["http-api", "alb", "wait-tier"], NO_LOGS)
    rows = [line for line in table.splitlines()[2:]]
    assert len(rows) == sum(len(t.patterns) for t in PER_MILLION) * 3 * 2
    for row in rows:
        cells = [c.strip() for c in row.strip("|").split("|")]
        bound, value = (float(re.sub(r"[^0-9.]", "", c)) for c in (cells[2], cells[3]))
        assert cells[4] == ("**met**" if value <= bound else "**not met**"), row
    # 7 write units and three HTTP API requests a message: well above $3.00 through the HTTP API on demand
    first = next(r for r in rows if "| http-api, on demand |" in r)
    assert first.startswith("| one at a time, one client |") and first.endswith("**not met** |")


def test_a_coalesced_pattern_runs_through_the_wait_tier_behind_the_door():
    assert door_label("one at a time, 16 producers + 16 consumers, coalesced", "alb") == "alb + wait tier"
    assert door_label("one at a time, 16 producers + 16 consumers, coalesced", "wait-tier") == "wait-tier"
    assert door_label("one at a time, 16 producers + 16 consumers", "alb") == "alb"


def test_the_routes_memory_is_read_from_the_synthesized_functions():
    """The bench prices Lambda at the memory each route is deployed at (it refuses to run when they differ)."""
    from bench.message_report import deployed_memory

    def function(handler: str, memory: int) -> dict[str, object]:
        return {"Type": "AWS::Lambda::Function", "Properties": {"Handler": handler, "MemorySize": memory}}

    template = {
        "Resources": {
            "Send": function("post_messages.handler", 256),
            "Receive": function("get_messages.handler", 512),
            "Delete": function("delete_messages.handler", 128),
            "Other": function("put_queue.handler", 1024),
        }
    }
    assert deployed_memory(template) == {"send": 256, "receive": 512, "delete": 128}
