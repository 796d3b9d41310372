"""Every kind of item the DynamoDB engine writes in the message table for standard queues (and a FIFO queue's, which
the message table holds beside them), written through its message stores as the services write them: what the
items' models are checked against (`tests/storage/test_item_models.py`)."""

from __future__ import annotations

import base64
import dataclasses
import random
from typing import Any

from mnsd.ground import actor
from mnsd.ground.settings import Settings
from mnsd.model.kinds import STANDARD
from mnsd.model.messages import Content, Message, Property, body_md5, dead_letter_marks
from mnsd.storage import Storage
from mnsd.storage.dynamodb import dynamodb_storage
from mnsd.storage.dynamodb.items import dead_letters
from mnsd.storage.dynamodb.placement.placement import Placement
from mnsd.storage.dynamodb.standard.striped import StripedMessageStore

NOW = 1_700_000_000_000
RETENTION = 3600
# One stripe, its writes keeping the ready index since the epoch, the index built (as `tests.storage.engines`).
INDEXED = Placement(stripes=1, index_since=1, plain_stripes=0)


def _text(size: int, seed: int) -> str:
    """Incompressible text."""
    return base64.b64encode(random.Random(seed).randbytes(size)).decode()[:size]


def _sent(store: Any, queue_id: str, texts: list[str], at: int = NOW, delays: list[int] | None = None,
          **content: Any) -> list[Message]:  # fmt: skip
    ids = store.new_ids(queue_id, len(texts), at)
    delays = delays or [0] * len(texts)
    return [
        Message.enqueued(queue_id, id_, at, at + delay, at // 1000 + RETENTION, Content(body_md5(t), t, 8, **content))
        for id_, t, delay in zip(ids, texts, delays, strict=True)
    ]


def _put(store: Any, messages: list[Message]) -> list[Message]:
    assert store.put(messages) == set()
    return messages


def _claim(store: Any, queue_id: str, now: int, count: int, visible_at: int) -> list[Message]:
    scan = store.scan_ready(queue_id, now, count)
    claimed = scan.claim(scan.messages, count, now, visible_at)
    store.load_bodies(claimed)
    return list(claimed)


def _handles(messages: list[Message]) -> list[Any]:
    return [(m.ref, m.version) for m in messages]


def stores(client: Any) -> tuple[StripedMessageStore, StripedMessageStore, Storage]:
    """A quiet store and one keeping the ready index, both packing batches, over one client; and the storage of the
    first (its FIFO store)."""
    settings = Settings(packed_batches=True)
    quiet = dynamodb_storage(client, settings)
    indexed = dynamodb_storage(client, settings)
    assert isinstance(quiet.messages, StripedMessageStore) and isinstance(indexed.messages, StripedMessageStore)
    indexed.messages.placer.placements.unrecorded = INDEXED
    return quiet.messages, indexed.messages, quiet


def write_every_standard_kind(client: Any) -> None:
    """Single leases (inline text, inline compressed, out of line with a body item; properties, a group; received,
    re-timed, kept, rewound), packs (entries claimed, re-timed, deleted, kept, rewound; several a batch), batch body
    items and a batch's own body items (too large for one), receivers' copies naming their original's bodies,
    dead letters, and a logging queue's leases and packs (who acted, body sizes, moved)."""
    quiet, indexed, _ = stores(client)
    user = (Property("k", "v", "STRING"),)
    system = (Property("s", "1", "NUMBER"),)

    # q-plain: quiet. Singles: text inline, compressible inline, out of line; with properties and a group.
    _put(quiet, _sent(quiet, "q-plain", ["hello"]))
    _put(quiet, _sent(quiet, "q-plain", ["a" * 600]))
    _put(quiet, _sent(quiet, "q-plain", [_text(2000, 1)], user_properties=user, system_properties=system))
    _put(quiet, _sent(quiet, "q-plain", ["grouped"], message_group_id="g1"))
    # A batch of 16 in two priorities and a delay (several packs, one body item), then claims, a re-timing, deletes,
    # a delete kept for rewind, and a rewind.
    texts = [f"entry-{n}-" + "y" * n for n in range(16)]
    batch = _sent(quiet, "q-plain", texts, delays=[0] * 12 + [5000] * 4, user_properties=user)
    batch = [dataclasses.replace(m, priority=4) if n % 5 == 0 else m for n, m in enumerate(batch)]
    _put(quiet, batch)
    assert len(_claim(quiet, "q-plain", NOW + 10, 32, NOW + 60_000)) == 16
    assert quiet.rewind("q-plain", NOW, NOW + 15) == 16  # (in flight: receivable again, new versions)
    claimed = _claim(quiet, "q-plain", NOW + 20, 32, NOW + 60_000)
    packed = [m for m in claimed if m.message_id in {b.message_id for b in batch}]
    singles = [m for m in claimed if m not in packed]
    assert len(packed) == 12 and len(singles) == 4
    assert quiet.change_visibility(packed[0].ref, packed[0].version, NOW + 30, NOW + 30_000)
    assert quiet.delete_many(_handles(packed[1:3]), NOW + 30) == [True, True]
    assert quiet.delete_keeping(_handles(packed[3:5]), NOW + 30) == [True, True]
    assert quiet.delete_keeping(_handles(singles[:1]), NOW + 30) == [True]
    assert quiet.change_visibility(singles[1].ref, singles[1].version, NOW + 30, NOW + 40_000)
    # A batch too large for one body item: a body item per message, with its properties and group.
    _put(quiet, _sent(quiet, "q-plain", [_text(60_000, n) for n in range(8)], user_properties=user,
                      system_properties=system, message_group_id="g2"))  # fmt: skip

    # q-index: its writes keep the ready index (`w`); claims leave it in place (a held version).
    _put(indexed, _sent(indexed, "q-index", ["one"]))
    _put(indexed, _sent(indexed, "q-index", [_text(2000, 2)]))
    _put(indexed, _sent(indexed, "q-index", [f"i-{n}" for n in range(6)]))
    _claim(indexed, "q-index", NOW + 10, 3, NOW + 60_000)

    # q-orig and its receiver q-copy: a put of the originals and their copies, the copies naming the originals'
    # body items (a single message's out of line, a batch's).
    originals = _sent(quiet, "q-orig", [_text(3000, 3)]) + _sent(quiet, "q-orig", [_text(900, n) for n in range(4)])
    ids = quiet.new_ids("q-copy", 1, NOW) + quiet.new_ids("q-copy", 4, NOW)
    copies = [STANDARD.copied(m, "q-copy", id_) for m, id_ in zip(originals, ids, strict=True)]
    _put(quiet, originals + copies)

    # q-log: a logging queue's messages, sent, received and moved by an access key: who acted (`a`, `a{n}`), a packed
    # entry's body size (`y{n}`); dead letters to q-dlq, a pack's entry marked moved (`t{n}`), a single lease
    # marked moved and expired (`t`: deleted after its move, here left as a failed delete leaves it).
    with actor.acting("AK-LOG"), actor.recording(True):
        _put(quiet, _sent(quiet, "q-log", ["logged"], logging=True))
        _put(quiet, _sent(quiet, "q-log", [f"l-{n}" for n in range(4)], logging=True))
        claimed = _claim(quiet, "q-log", NOW + 10, 5, NOW + 1000)
        assert len(claimed) == 5
        for source in claimed[:2]:
            again = dataclasses.replace(source, visible_at=NOW + 1000)
            marks = dead_letter_marks("DeadLetter", "acs:mns:cn-hangzhou:1001:/queues/log", source.message_id)
            target = again.moved("q-dlq", quiet.new_ids("q-dlq", 1, NOW + 2000)[0], NOW + 2000, marks, False)
            leave = dead_letters.conditional
            dead_letters.conditional = lambda *a, **k: None
            try:
                assert quiet.move(again, NOW + 2000, target)
            finally:
                dead_letters.conditional = leave


def write_fifo_kinds(storage: Storage) -> None:
    """A FIFO queue's items: group items, homes, leases and a pack in its groups' partitions."""
    store = storage.fifo_messages
    messages = []
    for n, group in enumerate(["a", "a", "b"]):
        position = store.sequence("q-fifo", group, 1, NOW)
        content = Content(body_md5(f"f{n}"), f"f{n}", 8, message_group_id=group, fifo=True)
        messages.append(Message.enqueued("q-fifo", f"F{n:05d}", NOW, NOW, NOW // 1000 + RETENTION, content, position))
    assert store.put(messages) == set()
    scan = store.scan_ready("q-fifo", NOW + 10, 10)
    scan.claim(scan.messages, 10, NOW + 10, NOW + 60_000)
