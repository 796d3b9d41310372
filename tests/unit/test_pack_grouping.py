""" "Is it packed" decided once, in the DynamoDB engine's `items/packs.py`: references (candidates' refs, receipt
handles' leases) grouped by the item that stores them (`by_pack`, `pack_of`), and no module of the rooms above
`items/` deciding it from a message id itself."""

from __future__ import annotations

import re
from pathlib import Path

from mnsd.model.messages import MessageRef
from mnsd.storage.dynamodb.items.packs import Entry, by_pack, entry_of, pack_ids, pack_key, pack_of
from mnsd.storage.ids import new_message_id

NOW = 1_700_000_000_000
ENGINE = Path(__file__).resolve().parents[2] / "layers/mnsd/python/mnsd/storage/dynamodb"


def refs(ids: list[str], priority: int = 8, queue_id: str = "q1") -> list[MessageRef]:
    return [MessageRef(queue_id, priority, NOW, message_id) for message_id in ids]


def test_a_batchs_references_are_one_pack_and_a_single_message_its_own_lease() -> None:
    batch = refs(pack_ids(4, 0, NOW))
    single = refs([new_message_id(NOW, 0)])
    mixed = [batch[0], single[0], batch[2], batch[1], batch[3]]
    stored = by_pack(mixed)
    assert [(s.places, s.pack is None) for s in stored] == [([0, 2, 3, 4], False), ([1], True)]
    entry = entry_of(batch[0].message_id)
    assert isinstance(entry, Entry)
    key = pack_key(batch[0], entry)
    assert stored[0].pack == (key["pk"]["S"], key["sk"]["S"]) == pack_of(batch[3])
    assert pack_of(single[0]) is None


def test_each_single_message_is_alone_and_each_pack_in_the_order_of_its_first_reference() -> None:
    first, second = refs(pack_ids(2, 0, NOW)), refs(pack_ids(3, 0, NOW))
    singles = refs([new_message_id(NOW, 0), new_message_id(NOW, 0)])
    stored = by_pack([singles[0], second[1], first[0], singles[1], second[0], first[1]])
    assert [s.places for s in stored] == [[0], [1, 4], [2, 5], [3]]


def test_a_batchs_entries_of_another_priority_or_queue_are_another_pack() -> None:
    ids = pack_ids(4, 0, NOW)
    stored = by_pack([*refs(ids[:2]), *refs(ids[2:], priority=1)])
    assert [s.places for s in stored] == [[0, 1], [2, 3]]
    assert [s.places for s in by_pack([*refs(ids[:2]), *refs(ids[2:], queue_id="q2")])] == [[0, 1], [2, 3]]


def test_a_fifo_packs_entries_at_their_consecutive_positions_are_one_pack() -> None:
    ids = pack_ids(3, 0, NOW)
    run = [MessageRef("q1", 8, 40 + n, message_id, "g") for n, message_id in enumerate(ids)]
    (stored,) = by_pack(run)
    assert stored.places == [0, 1, 2] and stored.pack is not None and stored.pack[1].startswith("L08" + f"{40:013d}")


def test_no_room_above_items_decides_from_a_message_id_whether_it_is_packed() -> None:
    """`entry_of` reads a packed message's entry (its index) in any room; whether a reference is packed, and which
    references share a pack, is asked of `pack_of` and `by_pack` only."""
    deciding = re.compile(r"\b(if|elif|and|or|not)\b[^\n#]*\bentry_of\(|\bentry_of\([^)]*\)\s+is\s+(not\s+)?None")
    found = [
        f"{path.relative_to(ENGINE)}:{n}"
        for room in ("standard", "fifo", "tables", "placement")
        for path in sorted((ENGINE / room).glob("*.py"))
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if deciding.search(line)
    ]
    assert found == []
