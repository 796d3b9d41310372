"""The cost targets of the issue "one message at a time for cents" (its "Must show"), and whether a figure meets
them: what `bench.message_report` states beside each measured figure."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Target:
    """At most `usd` per million messages (or a month, for the estate) for `patterns` (the first one measured that
    applies: a coalesced pattern is the wait tier's way of running the same clients) with `body` bodies."""

    label: str
    patterns: tuple[str, ...]
    body: str
    usd: float


# per million messages, 1 KB incompressible (unless 64 B), busy (indexed) standard queue, all-in
PER_MILLION = (
    Target("one at a time, one client", ("one at a time, one client",), "1 KB incompressible", 3.00),
    Target(
        "one at a time, 16 producers + 16 consumers",
        ("one at a time, 16 producers + 16 consumers", "one at a time, 16 producers + 16 consumers, coalesced"),
        "1 KB incompressible",
        1.20,
    ),
    Target(
        "receive 16, delete each alone, 16 consumers",
        ("receive 16, delete each alone, 16 consumers", "receive 16, delete each alone, 16 consumers, coalesced"),
        "1 KB incompressible",
        1.00,
    ),
    Target("whole batches of 16, 1 KB", ("whole batches of 16",), "1 KB incompressible", 1.10),
    Target("whole batches of 16, 64 B", ("whole batches of 16",), "64 B", 0.60),
)
ESTATE_MONTH = 1000.0  # the 500-queue estate, one message at a time, a month all-in


def verdict(value: float, bound: float) -> str:
    return "met" if value <= bound else "not met"
