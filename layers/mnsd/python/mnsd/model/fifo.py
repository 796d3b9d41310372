"""The rules of a FIFO queue's groups, in one place: the queue service and every storage engine apply them, each
engine keeping only how it stores and reads them (`mnsd.model.ports` states the contract, `tests/storage/
test_fifo_contract.py` holds every engine to it).

A FIFO message belongs to a group (`Message.message_group_id`) and has a place in it (`Message.position`):
- **positions**: a group's counter gives each new message the next position; a group made anew (its first send,
  or one after its counter was forgotten) numbers from `first_position`, the time of that send in ms;
- **lifetime**: a group's counter lives while the group has messages (see *an emptied group* below);
- **head and run**: a group's *head* is its lowest-positioned unexpired message (expired ones hold nothing back);
  its *run* is its Active messages from the head on, up to the first that is not Active (`head_run`);
- **runs of a receive**: a receive's candidates are cut into one run per group, in the order given (`runs`); a
  run is claimed whole or not at all, and only if every one of its candidates is Active as observed
  (`claimable`, `claim_runs`);
- **the hold**: a group is held while any message of its run in flight is hidden (`Hold`), and only that long: a
  message given back (its visibility changed to now, or shortened) or deleted stops holding it at once, so the group
  is released when its last lease lapses, is shortened past or is deleted; its head (the run's first, if not deleted)
  is the group's head again, before anything after it. A delayed message holds nothing, whatever its send's
  receipt handle does to it;
- **an emptied group** (it stores, keeps for rewind and holds nothing: `forgettable`) is forgotten by its engine's
  upkeep; a send then makes it anew (`first_position`). Whatever an engine counts of a group, it forgets it at the
  latest `GROUP_LIFETIME_MS` after its last send (`group_expires_at`);
- **dead letters**: a run's spent head (its first messages that reached MaxReceiveCount) moves to the dead-letter
  queue in order, and its group waits for a later receive; any other run is cut before its first spent message
  (`dead_letter_split`). A moved message leaves its group: the one after it becomes the head.

Where the engines once disagreed, one behaviour was chosen (docs/decisions.md, "FIFO queues"):
- a run with a candidate that is not Active is refused whole (as DynamoDB did; SQLite skipped the candidate);
- a group's first position is its first send's time in ms (as SQLite did; DynamoDB gave that time + 1).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from mnsd.model.messages import Message, MessageState
from mnsd.model.queues import MAX_RETENTION_SECONDS

# How long a group's counter is kept after its last send: a day past the longest retention (15 days).
GROUP_LIFETIME_MS = (MAX_RETENTION_SECONDS + 86_400) * 1000
# How long after a group's last send a message it numbered may still be on its way to the store (numbered by
# `sequence`, not yet `put`): an engine that does not count such messages as stored keeps an emptied group this long.
SEND_SETTLE_MS = 60_000


def first_position(now_ms: int) -> int:
    """The position of a new group's first message: the time of its send (ms). Positions then rise by one per
    message, so a group re-made after its lifetime numbers above its former messages (unless it averaged over
    one message a millisecond)."""
    return now_ms


def positions(groups: list[str], sequence: Callable[[str, int], int]) -> list[int]:
    """The places of new messages of these groups, in the order given: each group's from its counter
    (`sequence(group, count)`: the first of `count` consecutive positions of the group), read once per group."""
    following = {group: sequence(group, groups.count(group)) for group in dict.fromkeys(groups)}
    found: list[int] = []
    for group in groups:
        found.append(following[group])
        following[group] += 1
    return found


def group_expires_at(last_send_ms: int) -> int:
    """Until when (ms) an engine keeps a group's counter after its last send (`GROUP_LIFETIME_MS`)."""
    return last_send_ms + GROUP_LIFETIME_MS


@dataclass(frozen=True)
class Hold:
    """What holds a group: the next visible time of each message of its run in flight not yet deleted, by position.

    The group is held while any of them is hidden (`held`). A claim makes a new hold of its run (`claimed`); a
    visibility change moves its message's time, shorter or longer (`retimed`: to now gives it back at once); a
    delete, a dead-letter move or an expiry takes its message out (`released`). A message that is not in the run
    (delayed, never received) changes nothing. An engine keeps it as it likes: the DynamoDB engine writes these
    changes on the group's item, the SQLite engine reads it from its rows (`of`); both ask `held`."""

    leases: Mapping[int, int] = field(default_factory=dict)

    @classmethod
    def of(cls, messages: Iterable[Message], now_ms: int) -> Hold:
        """The hold a group's messages show at `now_ms`: those received and hidden (Inactive)."""
        return cls({m.position: m.visible_at for m in messages if m.state_at(now_ms) is MessageState.INACTIVE})

    @classmethod
    def claimed(cls, run: Iterable[Message]) -> Hold:
        """The hold of a run just claimed (its messages as the claim leaves them)."""
        return cls({m.position: m.visible_at for m in run})

    def held(self, now_ms: int) -> bool:
        return any(visible_at > now_ms for visible_at in self.leases.values())

    def until(self, now_ms: int) -> int | None:
        """When the group is released if nothing changes (None: it is not held)."""
        return max(self.leases.values()) if self.held(now_ms) else None

    def hidden(self, now_ms: int) -> int:
        """How many of its messages are hidden (in flight) now."""
        return sum(1 for visible_at in self.leases.values() if visible_at > now_ms)

    def retimed(self, position: int, visible_at: int) -> Hold:
        if position not in self.leases:
            return self
        return Hold({**self.leases, position: visible_at})

    def released(self, position: int) -> Hold:
        return Hold({p: v for p, v in self.leases.items() if p != position})


def forgettable(stored: int, kept: int, hold: Hold, now_ms: int) -> bool:
    """Whether a group is emptied, and so forgotten by its engine's upkeep: it stores no message (those numbered and
    on their way counted, or waited for `SEND_SETTLE_MS`), keeps none for rewind and holds nothing."""
    return stored <= 0 and kept <= 0 and not hold.held(now_ms)


@dataclass(frozen=True)
class HeadRun:
    """What a group's messages show from its head: its run, when its head becomes receivable if it is not (None:
    it is, or the group has no message), and its head's position (None: no message)."""

    messages: list[Message]
    wakes_at: int | None
    head: int | None


def head_run(messages: Iterable[Message], now_ms: int, wanted: int) -> HeadRun:
    """A group's run from its messages in position order (read lazily: nothing past the run's end is taken): its
    Active messages from its head on, up to `wanted` or the first that is not Active; expired ones are skipped."""
    run: list[Message] = []
    for message in messages:
        state = message.state_at(now_ms)
        if state is MessageState.EXPIRED:
            continue
        if state is not MessageState.ACTIVE:
            return HeadRun(run, None if run else message.visible_at, (run[0] if run else message).position)
        run.append(message)
        if len(run) >= wanted:
            break
    return HeadRun(run, None, run[0].position if run else None)


def runs(candidates: Iterable[Message]) -> list[list[Message]]:
    """A receive's FIFO candidates cut into runs: one per group (of a queue), in the order of each group's first
    candidate, each holding its group's candidates in the order given (a FIFO scan gives them in position
    order)."""
    found: dict[tuple[str, str], list[Message]] = {}
    for candidate in candidates:
        found.setdefault((candidate.queue_id, candidate.message_group_id), []).append(candidate)
    return list(found.values())


def claimable(run: list[Message], now_ms: int) -> bool:
    """Whether a run may be claimed: every candidate of it Active as observed. One that is not (expired since the
    scan, or given delayed or in flight) refuses the whole run: the scan's picture of the group is stale, and
    claiming around the candidate would take the messages after it without the one before them. The next
    receive reads the group again (an expired message then holds nothing back)."""
    return all(m.state_at(now_ms) is MessageState.ACTIVE for m in run)


def claim_runs(
    candidates: Iterable[Message], count: int, now_ms: int, claim_run: Callable[[list[Message]], list[Message]]
) -> list[Message]:
    """Claim a receive's FIFO candidates run by run (`runs`) until `count` are owned: each run cut to the room
    left, then, if `claimable`, handed to the engine's `claim_run` (all of it claimed in one atomic step from
    its group's head, or none). The messages claimed, in order."""
    claimed: list[Message] = []
    for run in runs(candidates):
        run = run[: count - len(claimed)]
        if not run:
            break
        if claimable(run, now_ms):
            claimed += claim_run(run)
    return claimed


def spent(message: Message, max_receive_count: int) -> bool:
    """Whether the message's next receive would exceed a dead-letter policy's MaxReceiveCount."""
    return message.dequeue_count >= max_receive_count


def dead_letter_split(run: list[Message], max_receive_count: int) -> tuple[list[Message], list[Message]]:
    """A run under a dead-letter policy: (its spent head, to move in order; what may still be claimed). A group
    whose head moves waits for a later receive (nothing of it claimed now); another run is cut before its first
    spent message."""
    moves = list(itertools.takewhile(lambda m: spent(m, max_receive_count), run))
    if moves:
        return moves, []
    return [], list(itertools.takewhile(lambda m: not spent(m, max_receive_count), run))
