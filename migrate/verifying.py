"""`verify`: the target against the source: configuration drift (the plan's creations, changes and conflicts) and
each queue's messages (active, in flight, delayed) on both sides; a message still waiting on the source is a
difference (it has not moved yet)."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from migrate.planning import CONFLICT, CREATE, UPDATE, Plan
from migrate.rendering import human
from mnsclient.errors import ServiceError
from mnsclient.messages import MessageClient


@dataclass(frozen=True)
class Counts:
    queue: str
    source: int | None  # None: the side could not be read (its error beside)
    target: int | None
    error: str = ""

    @property
    def differs(self) -> bool:
        return bool(self.error) or bool(self.source)


def _waiting(api: MessageClient, queue: str) -> int:
    return sum(api.counts(queue))


def count_messages(source: MessageClient, target: MessageClient, queues: list[str], parallel: int) -> list[Counts]:
    def one(queue: str) -> Counts:
        try:
            return Counts(queue, _waiting(source, queue), _waiting(target, queue))
        except ServiceError as error:
            return Counts(queue, None, None, f"queue {queue}: {error}")

    with ThreadPoolExecutor(max_workers=parallel) as pool:
        return list(pool.map(one, queues))


def report(plan: Plan, counts: list[Counts]) -> tuple[str, bool]:
    """The verification as text and whether anything differs."""
    drift = plan.drift
    lines = [human(plan) if drift else f"configuration: the target matches the source ({plan.target})", ""]
    lines.append(f"{'queue':40} {'source':>8} {'target':>8}")
    for c in counts:
        mark = " <- not moved" if c.source else ""
        lines.append(c.error or f"{c.queue:40} {c.source:>8} {c.target:>8}{mark}")
    differs = drift or any(c.differs for c in counts)
    lines.append("")
    lines.append("DIFFERENT" if differs else "SAME: configuration matches and no message waits on the source")
    return "\n".join(lines), differs


def report_json(plan: Plan, counts: list[Counts]) -> tuple[str, bool]:
    drift = [
        {"action": c.action, "kind": c.kind, "name": c.name, "reason": c.reason}
        for c in plan.changes
        if c.action in (CREATE, UPDATE, CONFLICT)
    ]
    rows = [{"queue": c.queue, "source": c.source, "target": c.target, "error": c.error} for c in counts]
    differs = bool(drift) or any(c.differs for c in counts)
    return json.dumps({"differs": differs, "drift": drift, "messages": rows}, indent=2), differs
