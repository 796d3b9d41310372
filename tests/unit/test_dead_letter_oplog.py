"""The operation log of deletes with rewind on, rewinds, drops and dead-letter moves: one event per operation."""

from __future__ import annotations

import dataclasses

from mnsd.storage.dynamodb.items import layout
from mnsd.storage.dynamodb.tables.changes import message_change
from mnsd.storage.sqlite import sqlite_storage
from tests.support.stored import NOW, message


def logged(n: int, queue_id: str = "q1"):
    return dataclasses.replace(message(n, queue_id=queue_id), logging=True)


def events(store) -> list[tuple[str, str]]:
    found, upto = store.changes()
    store.forget_changes(upto)
    return [(e.event, e.message_id) for e in found]


def test_a_kept_lease_image_has_the_kept_mark_and_no_visible_time():
    item = layout.kept_lease(logged(1))
    assert item[layout.KEPT_ATTRIBUTE] == {"BOOL": True} and "v" not in item
    assert layout.state_of(item, NOW).value == "Expired"  # never returned nor counted by lease readers


def test_sqlite_records_of_rewind_operations_give_one_event_each():
    storage = sqlite_storage(":memory:")
    store = storage.messages
    store.put([logged(1), logged(2)])
    scan = store.scan_ready("q1", NOW + 10, 10)
    one, two = scan.claim(scan.messages, 2, NOW + 10, NOW + 1000)
    assert events(store) == [("send", "M00001"), ("send", "M00002"), ("receive", "M00001"), ("receive", "M00002")]
    store.delete_keeping([(one.ref, one.version)], NOW + 20)
    assert events(store) == [("delete", "M00001")]
    assert store.rewind("q1", NOW, NOW + 30) == 2  # M00001 restored, M00002 made visible
    assert events(store) == [("rewind", "M00001"), ("change_visibility", "M00002")]
    scan = store.scan_ready("q1", NOW + 40, 10)
    for lease in scan.claim(scan.messages, 2, NOW + 40, NOW + 1000):
        store.delete_keeping([(lease.ref, lease.version)], NOW + 50)
    assert sorted(events(store)) == [
        ("delete", "M00001"),
        ("delete", "M00002"),
        ("receive", "M00001"),
        ("receive", "M00002"),
    ]
    assert store.drop_kept("q1", NOW + 60) == 2
    assert events(store) == []  # dropping what was kept logs nothing more
    storage.database.close()


def test_sqlite_records_of_a_move_are_a_redrive_or_dead_letter_in_the_source_and_a_send_in_the_target():
    storage = sqlite_storage(":memory:")
    store = storage.messages
    store.put([logged(1)])
    events(store)
    (seen,) = store.peek_ready("q1", NOW + 10, 10)
    target = dataclasses.replace(seen, queue_id="dlq", message_id="D1", version=0)
    assert store.move(seen, NOW + 10, target)
    assert events(store) == [("redrive", "M00001"), ("send", "D1")]  # (the target names no origin)
    storage.database.close()


def test_stream_records_of_a_dynamodb_kept_lease():
    live = {**layout.message_items(logged(1))[-1], "d": {"N": "1"}, "v": {"N": str(NOW + 1000)}}
    kept = layout.kept_lease(logged(1))
    base = {"eventID": "e1", "dynamodb": {"ApproximateCreationDateTime": NOW / 1000}}

    def record(name: str, new: dict | None, old: dict | None) -> dict:
        images = {"NewImage": new, "OldImage": old}
        return {**base, "eventName": name, "dynamodb": {**base["dynamodb"], **{k: v for k, v in images.items() if v}}}

    deleted = message_change(record("MODIFY", kept, live))
    assert deleted is not None and deleted.event == "delete"
    rewound = message_change(record("MODIFY", live, kept))
    assert rewound is not None and rewound.event == "rewind"
    assert message_change(record("REMOVE", None, kept)) is None  # dropped or expired
