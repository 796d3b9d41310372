"""What a drain or bridge shows while it runs: on a terminal, a bar per queue being moved, redrawn in place; elsewhere
one line per queue when it is done. Then the summary, for people or (`--json`) for scripts."""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from typing import TextIO

from migrate.moving import QueueStats

WIDTH = 24
REDRAW_SECONDS = 0.25


def bar(stats: QueueStats) -> str:
    done = stats.moved + stats.received_again
    total = max(stats.waiting_at_start, done)
    if stats.finished:
        state = "failed" if stats.error else "done"
    else:
        state = "moving"
    filled = WIDTH if total == 0 and stats.finished else (WIDTH * done // total if total else 0)
    return f"{stats.queue[:32]:32} [{'#' * filled}{'.' * (WIDTH - filled)}] {done}/{total} {state}"


class Progress:
    def __init__(self, out: TextIO, queues: Sequence[QueueStats]) -> None:
        self.out = out
        self.queues = queues
        self.tty = out.isatty()
        self._drawn = 0
        self._reported: set[str] = set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> Progress:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.draw()

    def _run(self) -> None:
        while not self._stop.wait(REDRAW_SECONDS):
            self.draw()

    def draw(self) -> None:
        if not self.tty:
            for stats in self.queues:
                if stats.finished and stats.queue not in self._reported:
                    self._reported.add(stats.queue)
                    self.out.write(f"{bar(stats)}\n")
            self.out.flush()
            return
        shown = [s for s in self.queues if not s.finished or s.moved or s.received_again or s.error]
        lines = [bar(s) for s in shown]
        up = f"\x1b[{self._drawn}F" if self._drawn else ""
        self.out.write(up + "".join(f"\x1b[2K{line}\n" for line in lines))
        self.out.flush()
        self._drawn = len(lines)


def totals(queues: Sequence[QueueStats]) -> dict[str, int]:
    names = ("moved", "received_again", "possible_duplicates", "left_on_source", "retries")
    found = {name: sum(getattr(q, name) for q in queues) for name in names}
    found["failed_queues"] = sum(1 for q in queues if q.error)
    return found


def summary(queues: Sequence[QueueStats], seconds: float) -> str:
    t = totals(queues)
    lines = [
        f"{len(queues)} queues in {seconds:.1f} s: {t['moved']} messages moved, {t['received_again']} received again "
        f"after their copy (deleted, not sent twice), {t['possible_duplicates']} possible duplicates on the target "
        f"(sent again after an answer was lost), {t['left_on_source']} left on the source, {t['retries']} retries"
    ]
    lines += [f"  {q.error}" for q in queues if q.error]
    lines += [
        f"  queue {q.queue}: {q.left_on_source} messages still on the source"
        for q in queues
        if q.left_on_source and not q.error
    ]
    return "\n".join(lines)


def summary_json(queues: Sequence[QueueStats], seconds: float) -> str:
    per_queue = [
        {
            "queue": q.queue,
            "moved": q.moved,
            "received_again": q.received_again,
            "possible_duplicates": q.possible_duplicates,
            "left_on_source": q.left_on_source,
            "retries": q.retries,
            "error": q.error,
        }
        for q in queues
    ]
    return json.dumps({"seconds": round(seconds, 3), "totals": totals(queues), "queues": per_queue}, indent=2)
