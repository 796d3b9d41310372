"""The DynamoDB engine's FIFO directory (`mnsd.storage.dynamodb.fifo.directory`): its width follows the queue's placement,
each group's item lives at the home recorded when it was made, whatever width each container believes, and scans
move free groups to the home the grown width gives them.

Two containers are two engines over one table (each with its own remembered homes and its own view of the
queue's placement: `Placements.unrecorded` stands for the placement a container has read).
"""

from __future__ import annotations

import threading
import zlib

import boto3
import pytest
from moto import mock_aws

from local_runtime.moto_client import SerializedClient
from local_runtime.tables import create_tables
from mnsd.ground.settings import Settings
from mnsd.storage import Storage
from mnsd.storage.dynamodb import dynamodb_storage
from mnsd.storage.dynamodb.fifo.directory import HOME, MIN_DIRECTORY_WIDTH
from mnsd.storage.dynamodb.fifo.fifo_groups import FifoGroups
from mnsd.storage.dynamodb.placement.placement import Placement
from tests.support.fifo_stored import NOW, VISIBLE, fifo_message
from tests.support.simulator.dynamodb import SimulatedDynamoDB

WIDE = 64


def _moving_group(width: int = WIDE) -> str:
    """A group whose home at `width` is not its home at 8 (so growing moves it)."""
    return next(
        g for g in (f"g{n}" for n in range(100)) if zlib.crc32(g.encode()) % width != zlib.crc32(g.encode()) % 8
    )


@pytest.fixture(params=["dynamodb-fake", "dynamodb-moto"])
def client(request):
    if request.param == "dynamodb-moto":
        request.getfixturevalue("aws_credentials")
        with mock_aws():
            moto = SerializedClient(boto3.client("dynamodb", region_name="us-east-1"))
            create_tables(moto, Settings())
            yield moto
        return
    fake = SerializedClient(SimulatedDynamoDB())
    create_tables(fake, Settings())
    yield fake


def container(client, stripes: int = 1) -> Storage:
    """An engine (a container) over the shared table, believing the queue has `stripes` stripes."""
    storage = dynamodb_storage(client, Settings())
    storage.fifo_messages.placer.placements.unrecorded = Placement(stripes=stripes)
    return storage


def messages_of(storage: Storage) -> FifoGroups:
    assert isinstance(storage.fifo_messages, FifoGroups)
    return storage.fifo_messages


def group_items(client, group: str) -> list[str]:
    """The partitions holding a group item of `group` (queue q1)."""
    items = client.scan(TableName=Settings().message_table)["Items"]
    return sorted(i["pk"]["S"] for i in items if i["sk"]["S"] == "G" + group and i["pk"]["S"].startswith("q1#D"))


def home_of(client, group: str) -> int | None:
    key = {"pk": {"S": f"q1#G{group}"}, "sk": {"S": HOME}}
    item = client.get_item(TableName=Settings().message_table, Key=key, ConsistentRead=True).get("Item")
    return None if item is None else int(item["d"]["N"])


def send(storage: Storage, group: str, n: int):
    message = fifo_message(storage, group, n)
    assert storage.fifo_messages.put([message]) == set()
    return message


def test_the_width_is_read_from_the_placement(client):
    messages = messages_of(container(client))
    assert messages.directory.width("q1") == MIN_DIRECTORY_WIDTH  # a quiet queue keeps the 8 it always had
    for stripes, width in ((8, 8), (64, 64), (100, 128), (128, 128)):
        messages.placer.placements.unrecorded = Placement(stripes=stripes)
        assert messages.directory.width("q1") == width


def test_an_empty_poll_of_a_quiet_queue_reads_its_8_directory_partitions():
    fake = SimulatedDynamoDB()
    create_tables(fake, Settings())
    storage = container(fake)
    before = fake.usage.requests["Query"]
    assert storage.fifo_messages.peek_ready("q1", NOW, 16) == []
    assert fake.usage.requests["Query"] - before == MIN_DIRECTORY_WIDTH


def test_a_group_is_made_at_the_home_of_its_creators_width_and_recorded(client):
    group = _moving_group()
    send(container(client, stripes=WIDE), group, 0)
    d = zlib.crc32(group.encode()) % WIDE
    assert group_items(client, group) == [f"q1#D{d}"]
    assert home_of(client, group) == d
    # A container that believes the queue narrower finds it through its home, and numbers on.
    narrow = container(client)
    assert narrow.fifo_messages.sequence("q1", group, 1, NOW + 5) == NOW + 1
    assert group_items(client, group) == [f"q1#D{d}"]


def test_two_racing_creators_of_one_group_end_with_one_group_item(client):
    group = _moving_group()
    narrow, wide = container(client), container(client, stripes=WIDE)
    # Both found no home; the narrow one makes the group first.
    assert messages_of(wide).directory.locate("q1", group) is None
    assert narrow.fifo_messages.sequence("q1", group, 1, NOW) == NOW
    assert messages_of(wide).writes.create("q1", group, 1, NOW, None) is False  # refused: it exists
    assert wide.fifo_messages.sequence("q1", group, 1, NOW) == NOW + 1  # found, numbered on
    assert group_items(client, group) == [f"q1#D{zlib.crc32(group.encode()) % 8}"]


def test_concurrent_first_sends_of_one_group_make_one_counter(client):
    group = _moving_group()
    containers = [container(client), container(client, stripes=WIDE)] * 3
    positions: list[int] = []

    def sends(storage: Storage) -> None:
        for _ in range(3):
            positions.append(storage.fifo_messages.sequence("q1", group, 1, NOW))

    threads = [threading.Thread(target=sends, args=(c,)) for c in containers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(positions) == list(range(NOW, NOW + 18))  # one counter: every position given once
    assert len(group_items(client, group)) == 1


def test_a_send_after_its_group_was_forgotten_and_made_anew_elsewhere(client):
    group = _moving_group()
    narrow, wide = container(client), container(client, stripes=WIDE)
    first = send(narrow, group, 0)  # narrow remembers the home at 8
    scan = narrow.fifo_messages.scan_ready("q1", NOW + 10, 16)
    (offered,) = scan.messages
    (claimed,) = scan.claim([offered], 1, NOW + 10, VISIBLE)
    assert narrow.fifo_messages.delete_many([(claimed.ref, claimed.version)], NOW + 20)[0]
    assert first.message_id == claimed.message_id
    # Another container's scan forgets the empty group (the narrow one still remembers its home).
    assert wide.fifo_messages.peek_ready("q1", NOW + 30, 16) == []
    assert group_items(client, group) == [] and home_of(client, group) is None
    later = NOW + 40
    assert wide.fifo_messages.sequence("q1", group, 1, later) == later  # made anew, at its home at 64
    # The narrow container still remembers the old home: its send finds the new one and numbers on.
    assert narrow.fifo_messages.sequence("q1", group, 1, later + 1) == later + 1
    assert group_items(client, group) == [f"q1#D{zlib.crc32(group.encode()) % WIDE}"]


def test_a_scan_moves_a_free_group_to_its_home_at_the_grown_width_and_it_works_there(client):
    group = _moving_group()
    narrow = container(client)
    sent = [send(narrow, group, n) for n in range(2)]
    old, new = zlib.crc32(group.encode()) % 8, zlib.crc32(group.encode()) % WIDE
    assert group_items(client, group) == [f"q1#D{old}"]
    grown = container(client, stripes=WIDE)
    scan = grown.fifo_messages.scan_ready("q1", NOW + 10, 16)
    offered = scan.messages
    assert [m.message_id for m in offered] == [m.message_id for m in sent]
    assert group_items(client, group) == [f"q1#D{new}"] and home_of(client, group) == new
    (claimed,) = scan.claim(offered, 1, NOW + 10, VISIBLE)
    # The narrow container remembers the old home: its delete finds the new one.
    assert narrow.fifo_messages.delete_many([(claimed.ref, claimed.version)], NOW + 20)[0]
    assert narrow.fifo_messages.sequence("q1", group, 1, NOW + 30) == NOW + 2
    assert grown.fifo_messages.counts("q1", NOW + 30).active == 1
    assert group_items(client, group) == [f"q1#D{new}"]


def test_a_held_group_is_never_moved(client):
    group = _moving_group()
    narrow = container(client)
    send(narrow, group, 0)
    send(narrow, group, 1)
    scan = narrow.fifo_messages.scan_ready("q1", NOW + 10, 1)
    (claimed,) = scan.claim(scan.messages, 1, NOW + 10, VISIBLE)
    grown = container(client, stripes=WIDE)
    old = f"q1#D{zlib.crc32(group.encode()) % 8}"
    assert grown.fifo_messages.peek_ready("q1", NOW + 20, 16) == []  # held
    assert group_items(client, group) == [old]
    assert grown.fifo_messages.change_visibility(claimed.ref, claimed.version, NOW + 20, VISIBLE + 1000)
    assert group_items(client, group) == [old]
    # Once its run is gone it is free, and the next scan moves it.
    held = grown.fifo_messages.held_groups("q1", NOW + 20, 10)
    assert held == [group]
    next_version = claimed.version + 1
    assert grown.fifo_messages.delete_many([(claimed.ref, next_version)], NOW + 30)[0]
    assert len(grown.fifo_messages.peek_ready("q1", NOW + 40, 16)) == 1
    assert group_items(client, group) == [f"q1#D{zlib.crc32(group.encode()) % WIDE}"]


def test_a_group_item_from_before_homes_is_found_and_moved(client):
    """A group item written before homes (no `i`, no home item) at `crc32 % 8`: sends find it; a wider scan moves
    it and gives it a home."""
    group = _moving_group()
    old = zlib.crc32(group.encode()) % 8
    client.put_item(
        TableName=Settings().message_table,
        Item={
            "pk": {"S": f"q1#D{old}"},
            "sk": {"S": "G" + group},
            **{name: {"N": str(value)} for name, value in (("n", NOW + 4), ("q", 0), ("o", 0), ("c", 0), ("x", 0))},
        },
    )
    grown = container(client, stripes=WIDE)
    assert grown.fifo_messages.sequence("q1", group, 1, NOW + 10) == NOW + 5
    message = fifo_message(grown, group, 9)  # (numbered NOW + 6)
    assert grown.fifo_messages.put([message]) == set()
    assert group_items(client, group) == [f"q1#D{old}"] and home_of(client, group) is None
    offered = grown.fifo_messages.peek_ready("q1", NOW + 10, 16)
    assert [m.message_id for m in offered] == [message.message_id]
    new = zlib.crc32(group.encode()) % WIDE
    assert group_items(client, group) == [f"q1#D{new}"] and home_of(client, group) == new
