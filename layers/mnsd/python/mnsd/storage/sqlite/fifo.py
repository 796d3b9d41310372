"""FIFO queues' messages on SQLite: `mnsd.storage.FifoMessageStore`.

Their rows are the standard store's (`messages.SqliteMessageStore`: every write but a claim is the same, and keeps
a group's state right by itself, `groups.py`); what differs is the scan, which finds the runs of free groups
(`groups.free_runs`), and the claim, which takes a run's rows in one transaction from its group's head (a savepoint
per run, so a refused run leaves none of it claimed); and the groups' counters (`sequence`).
"""

from __future__ import annotations

import sqlite3

from mnsd.model import fifo
from mnsd.model.messages import Message, MessageState
from mnsd.storage.sqlite import groups
from mnsd.storage.sqlite.messages import SqliteMessageStore, claim_lease


class SqliteFifoMessages(SqliteMessageStore):
    def sequence(self, queue_id: str, group: str, count: int, now_ms: int) -> int:
        with self.db.write() as connection:
            return groups.sequence(connection, queue_id, group, count, now_ms)

    def held_groups(self, queue_id: str, now_ms: int, limit: int) -> list[str]:
        with self.db.read() as connection:
            return groups.held_groups(connection, queue_id, now_ms, limit)

    def _ready(self, connection: sqlite3.Connection, queue_id: str, now_ms: int, wanted: int) -> list[Message]:
        """The runs of free groups (`groups.free_runs`)."""
        return groups.free_runs(connection, queue_id, now_ms, wanted)

    def _claim_some(self, candidates: list[Message], count: int, now_ms: int, visible_at: int) -> list[Message]:
        """One transaction: the candidates' runs as `fifo.claim_runs` says, each claimed whole or not at all
        (`_claim_run`)."""
        received = {  # prepared before the write lock is taken (an unclaimable run's candidates are not needed)
            m.message_id: m.received(now_ms, visible_at)
            for m in candidates
            if m.state_at(now_ms) is MessageState.ACTIVE
        }
        with self.db.write() as connection:
            claimed = fifo.claim_runs(
                candidates, count, now_ms, lambda run: _claim_run(connection, run, received, now_ms)
            )
            self.log_received(connection, claimed, now_ms)
        return claimed


def _claim_run(
    connection: sqlite3.Connection, run: list[Message], received: dict[str, Message], now_ms: int
) -> list[Message]:
    """A claimable run (`fifo.claimable`) claimed in order from its group's head (`groups.may_follow`), each as
    `received` says, or nothing of it (a savepoint)."""
    connection.execute("SAVEPOINT run")
    previous: Message | None = None
    for before in run:
        after = received[before.message_id]
        if not (
            groups.may_follow(connection, previous, before, now_ms) and claim_lease(connection, before, after, now_ms)
        ):
            connection.execute("ROLLBACK TO run")
            connection.execute("RELEASE run")
            return []
        previous = before
    connection.execute("RELEASE run")
    return [received[m.message_id] for m in run]
