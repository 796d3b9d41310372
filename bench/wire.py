"""The bytes a request and its answer carry on the wire, headers included: what an Application Load Balancer bills as
processed bytes. A model of measured points (`bench.front_door_cost.measure_wire`, the MNS Python SDK through a
counting relay): per operation and form (a single call, or the batch call of n messages), a fixed part (request
line, headers, the answer's status line and headers, the XML around the messages), a part per message beyond its
body (ids, MD5, receipt handle, its XML) and the body's own bytes, each counted once each way it travels (the send's
up, the receive's down). A receive that finds nothing is its error answer (`empty`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

Form = tuple[str, bool]  # (operation, batch call)


@dataclass(frozen=True)
class Wire:
    fixed: Mapping[Form, float]
    per_message: Mapping[Form, float]
    per_body_byte: Mapping[Form, float]
    empty: Mapping[Form, float]  # a receive's request and its MessageNotExist answer

    def carried(self, operation: str, batch: bool, messages: int, body_bytes: int) -> float:
        """Bytes up and down of one request of `operation` carrying `messages` messages of `body_bytes` bytes."""
        form = (operation, batch)
        if messages == 0 and form in self.empty:
            return self.empty[form]
        return self.fixed[form] + messages * (self.per_message[form] + self.per_body_byte[form] * body_bytes)


def fit(points: Mapping[tuple[int, int], float]) -> tuple[float, float, float]:
    """(fixed, per message, per body byte) of a batch form from its bytes at (messages, body bytes): two points of one
    body size and two body sizes at one count; a single form (one message a call) from its two body sizes, its
    per-message part folded into the fixed one."""
    counts = sorted({n for n, _ in points})
    bodies = sorted({b for _, b in points})
    top = max(counts)
    per_body = (points[(top, bodies[-1])] - points[(top, bodies[0])]) / (top * (bodies[-1] - bodies[0]))
    if len(counts) == 1:
        return points[(top, bodies[-1])] - top * per_body * bodies[-1], 0.0, per_body
    low = counts[0]
    per_message = (points[(top, bodies[-1])] - points[(low, bodies[-1])]) / (top - low) - per_body * bodies[-1]
    fixed = points[(top, bodies[-1])] - top * (per_message + per_body * bodies[-1])
    return fixed, per_message, per_body
