"""A background loop's repeated error: printed once, then summarised; its end said."""

from __future__ import annotations

from local_runtime.report import ErrorReport


def test_a_repeated_error_is_printed_once_then_summarised_each_minute():
    lines: list[str] = []
    now = [0.0]
    report = ErrorReport("sqlite changes", clock=lambda: now[0], out=lines.append)
    for tenth in range(601):  # ten a second for a minute
        now[0] = tenth / 10
        report.failed(OSError("database or disk is full"))
    assert lines == [
        "sqlite changes: OSError: database or disk is full",
        "sqlite changes: OSError: database or disk is full (again 600 times in 60 s)",
    ]


def test_a_new_kind_of_error_and_the_recovery_are_said():
    lines: list[str] = []
    report = ErrorReport("push worker", clock=lambda: 0.0, out=lines.append)
    report.failed(OSError("a"))
    report.failed(OSError("a"))
    report.failed(ValueError("b"))
    report.succeeded()
    report.succeeded()
    assert lines == [
        "push worker: OSError: a",
        "push worker: OSError: a (again 1 times in 0 s)",
        "push worker: ValueError: b",
        "push worker: working again",
    ]
