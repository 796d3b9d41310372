"""The arithmetic of the functions' CPU bench (`bench/lambda_cpu.py`): medians over runs, the per-call figure and the
handler's share the cost model takes from it."""

from __future__ import annotations

import pytest

from bench.lambda_cpu import FORMS, summary


def run(cpu: dict[str, float], calls: dict[str, float], call_ms: dict[str, float]) -> dict[str, dict[str, float]]:
    return {"cpu_ms": cpu, "calls": calls, "call_ms": call_ms}


def test_the_handler_is_the_invocation_less_its_calls_at_the_single_forms_mean_per_call():
    calls = {"send": 1.0, "receive": 2.0, "delete": 1.0, "batch send": 2.0, "batch receive": 3.0, "batch delete": 1.0}
    runs = [
        run(
            {"send": 3 + k, "receive": 5, "delete": 2.5, "batch send": 8, "batch receive": 15, "batch delete": 4},
            calls,
            {"send": 1.0, "receive": 1.5, "delete": 1.0, "batch send": 9, "batch receive": 9, "batch delete": 9},
        )
        for k in (0.0, 1.0, 10.0)  # the median run's send: 4 ms
    ]
    s = summary(runs)
    assert s["cpu_ms"]["send"] == 4
    # calls-weighted over the single forms only: (1 * 1.0 + 2 * 1.5 + 1 * 1.0) / 4; the batch forms' do not count
    assert s["per_call_ms"]["all"] == pytest.approx(1.25)
    assert s["handler_ms"]["send"] == pytest.approx(4 - 1.25)
    assert s["handler_ms"]["receive"] == pytest.approx(5 - 2 * 1.25)
    assert s["handler_ms"]["batch receive"] == pytest.approx(15 - 3 * 1.25)
    # per message beyond the first of a batch of 16: (batch less single) / 15
    assert s["per_message_ms"]["receive"] == pytest.approx(((15 - 3 * 1.25) - (5 - 2 * 1.25)) / 15)
    assert set(s["handler_ms"]) == set(FORMS)


def test_the_model_gives_back_the_measured_invocation_at_the_measured_calls():
    """Whatever the split, handler + calls * per-call is the invocation's measured CPU, single and batch alike."""
    cpu = {"send": 2.9, "receive": 5.3, "delete": 2.6, "batch send": 7.9, "batch receive": 15.6, "batch delete": 4.6}
    calls = {"send": 1.0, "receive": 2.0, "delete": 1.0, "batch send": 2.0, "batch receive": 3.1, "batch delete": 1.2}
    s = summary([run(cpu, calls, dict.fromkeys(FORMS, 1.2))] * 3)
    for op in ("send", "receive", "delete"):
        single = s["handler_ms"][op] + calls[op] * s["per_call_ms"]["all"]
        batch = s["handler_ms"][op] + 15 * s["per_message_ms"][op] + calls[f"batch {op}"] * s["per_call_ms"]["all"]
        assert (single, batch) == pytest.approx((cpu[op], cpu[f"batch {op}"]))
