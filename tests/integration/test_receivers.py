"""A queue's receivers through the queue service, on both engines (DynamoDB on moto, the embedded SQLite): each
receiver and the queue itself get every message once, with their own leases, counts, visibility and dead letters;
a receiver starts now or from a StartTime; a receiver is reached by its address `{queue}.{receiver}`."""

from __future__ import annotations

import collections

import pytest

from local_runtime.moto_client import SerializedClient
from mnsd.ground import errors
from mnsd.ground.settings import Settings
from mnsd.model.inputs import MessageInput
from mnsd.model.messages import Property
from mnsd.model.queues import DlqPolicyInput, QueueAttributeChanges, QueueCounts
from mnsd.queues import receivers as receivers_module
from mnsd.queues.receivers import ReceiverInput
from mnsd.services import build_services
from tests.integration.receiving import receive_all
from tests.integration.services import ACCOUNT, ENGINES, make_service, service_on
from tests.support.by_name import QueuesByName
from tests.support.simulator.dynamodb import SimulatedDynamoDB


@pytest.fixture(params=ENGINES)
def service(request, clock):
    """The queue service on each engine: DynamoDB on moto, and on the benchmarks' in-memory DynamoDB (moto takes
    minutes for the thousands of calls of the larger cases), and the embedded SQLite."""
    yield from service_on(request, clock)


# The cases of a thousand messages and more: on the in-memory DynamoDB and SQLite (moto would take minutes).
LARGE = pytest.mark.parametrize("service", ["dynamodb-fake", "sqlite"], indirect=True)


def send(service, count: int, name: str = "q", prefix: str = "m") -> list[str]:
    """`count` messages sent in batches of 16: their bodies."""
    bodies = [f"{prefix}{n}" for n in range(count)]
    for start in range(0, count, 16):
        inputs = [MessageInput(body, None, 1 + n % 16) for n, body in enumerate(bodies[start : start + 16])]
        assert all(r.error is None for r in service.send(ACCOUNT, name, inputs))
    return bodies


def take_all(service, name: str) -> list[str]:
    """Receive until nothing is left and delete each message received: the bodies, in the order received."""
    received = receive_all(service, name, rounds=200)
    for start in range(0, len(received), 16):
        handles = [r.receipt_handle for r in received[start : start + 16]]
        assert service.batch_delete(ACCOUNT, name, handles) == []
    return [r.message.body for r in received]


def counts(service, name: str) -> QueueCounts:
    return service.queue_counts(service.get_queue(ACCOUNT, name))


def create(service, name: str, **given: str) -> tuple[bool, bool]:
    return service.receivers.create(ACCOUNT, "q", name, ReceiverInput(**given))


@LARGE
def test_two_receivers_and_the_queue_each_get_every_one_of_1000_messages_once(service):
    service.create_queue(ACCOUNT, "q")
    assert create(service, "a") == (True, False)
    assert create(service, "b") == (True, False)
    sent = send(service, 1000)
    assert counts(service, "q") == counts(service, "q.a") == counts(service, "q.b") == QueueCounts(1000, 0, 0)

    # The queue's consumer takes everything: the receivers' messages are untouched.
    assert collections.Counter(take_all(service, "q")) == collections.Counter(sent)
    assert counts(service, "q") == QueueCounts(0, 0, 0)
    assert counts(service, "q.a") == counts(service, "q.b") == QueueCounts(1000, 0, 0)

    # Receiver a receives everything and deletes half: its counts are its own.
    received = receive_all(service, "q.a", rounds=200)
    assert collections.Counter(r.message.body for r in received) == collections.Counter(sent)
    assert counts(service, "q.a") == QueueCounts(0, 1000, 0)
    for start in range(0, 500, 16):
        handles = [r.receipt_handle for r in received[start : min(start + 16, 500)]]
        assert service.batch_delete(ACCOUNT, "q.a", handles) == []
    assert counts(service, "q.a") == QueueCounts(0, 500, 0)
    assert counts(service, "q.b") == QueueCounts(1000, 0, 0)

    assert collections.Counter(take_all(service, "q.b")) == collections.Counter(sent)
    assert counts(service, "q.b") == QueueCounts(0, 0, 0)
    assert counts(service, "q.a") == QueueCounts(0, 500, 0)
    listed = {s.receiver.name: s.counts for s in service.receivers.receivers_of(ACCOUNT, "q")}
    assert listed == {"a": QueueCounts(0, 500, 0), "b": QueueCounts(0, 0, 0)}


@LARGE
def test_a_receiver_created_after_500_sends_starting_now_gets_only_the_next_500(service, clock):
    service.create_queue(ACCOUNT, "q")
    earlier = send(service, 500, prefix="early")
    clock.advance(0.5)  # (within the second they were sent in)
    assert create(service, "late") == (True, False)
    later = send(service, 500, prefix="late")
    assert sorted(take_all(service, "q.late")) == sorted(later)
    assert sorted(take_all(service, "q")) == sorted(earlier + later)


@LARGE
def test_a_receiver_with_a_start_time_also_gets_what_was_enqueued_since_then(service, clock):
    service.create_queue(ACCOUNT, "q")
    before = send(service, 100, prefix="before")
    clock.advance(60)
    start = int(clock.now())
    earlier = send(service, 400, prefix="earlier")
    received = receive_all(service, "q", rounds=10)  # some of the queue's messages in flight, some ready
    assert len(received) == 160
    clock.advance(30)
    assert create(service, "replay", start_time=str(start)) == (True, False)
    later = send(service, 500, prefix="later")
    assert sorted(take_all(service, "q.replay")) == sorted(earlier + later)
    assert len(before) == 100 and counts(service, "q.replay") == QueueCounts(0, 0, 0)


@pytest.mark.parametrize("rewind", [False, True])
def test_what_the_queue_deleted_is_copied_only_when_its_rewind_kept_it(service, clock, rewind):
    service.create_queue(ACCOUNT, "q", QueueAttributeChanges(rewind_period="3600" if rewind else None))
    start = int(clock.now())
    sent = send(service, 40)
    deleted = take_all(service, "q")[:40]
    assert sorted(deleted) == sorted(sent)
    clock.advance(5)
    create(service, "replay", start_time=str(start))
    assert sorted(take_all(service, "q.replay")) == (sorted(sent) if rewind else [])


def test_a_long_copy_goes_on_with_each_identical_create_and_copies_each_message_once(service, clock, monkeypatch):
    monkeypatch.setattr(receivers_module, "COPY_PAGE", 7)
    monkeypatch.setattr(receivers_module, "COPY_PER_CALL", 20)
    service.create_queue(ACCOUNT, "q")
    start = int(clock.now())
    sent = send(service, 100)
    clock.advance(1)
    assert create(service, "replay", start_time=str(start)) == (True, True)
    (state,) = service.receivers.receivers_of(ACCOUNT, "q")
    assert state.copying and 0 < state.counts.active < 100
    calls = 0
    while create(service, "replay", start_time=str(start)) == (False, True):
        calls += 1
        assert calls < 10
    assert not service.receivers.get(ACCOUNT, "q", "replay").copying
    assert create(service, "replay") == (False, False)  # (no StartTime given: the one it has)
    assert sorted(take_all(service, "q.replay")) == sorted(sent)


def test_each_receivers_visibility_and_dead_letters_are_its_own(service, clock):
    service.create_queue(ACCOUNT, "dead")
    service.create_queue(ACCOUNT, "q", QueueAttributeChanges(visibility_timeout="30"))
    dlq = DlqPolicyInput("True", "dead", "2")
    assert create(service, "quick", visibility_timeout="5", dlq_policy=dlq) == (True, False)
    assert create(service, "slow") == (True, False)
    (sent,) = service.send(ACCOUNT, "q", [MessageInput("poison", None, 8, (Property("k", "v", "STRING"),))])
    now_ms = int(clock.now() * 1000)
    (quick,) = service.receive(ACCOUNT, "q.quick", 1, 0)
    (slow,) = service.receive(ACCOUNT, "q.slow", 1, 0)
    (own,) = service.receive(ACCOUNT, "q", 1, 0)
    assert quick.message.visible_at == now_ms + 5_000
    assert slow.message.visible_at == own.message.visible_at == now_ms + 30_000
    assert quick.message.message_id not in (slow.message.message_id, own.message.message_id, sent.message.message_id)
    clock.advance(6)
    (again,) = service.receive(ACCOUNT, "q.quick", 1, 0)
    assert again.message.dequeue_count == 2
    clock.advance(6)
    with pytest.raises(errors.MessageNotExist):  # a third receive would exceed 2: dead-lettered instead
        service.receive(ACCOUNT, "q.quick", 1, 0)
    (letter,) = service.receive(ACCOUNT, "dead", 1, 0)
    marks = {p.name: p.value for p in letter.message.system_properties}
    assert marks["DLQSourceArn"] == f"acs:mns:cn-hangzhou:{ACCOUNT}:queues/q.quick"
    assert marks["DLQOriginMessageId"] == quick.message.message_id
    assert letter.message.user_properties == (Property("k", "v", "STRING"),)
    assert counts(service, "q.slow") == counts(service, "q") == QueueCounts(0, 1, 0)  # still theirs, in flight
    assert service.redrive(ACCOUNT, "dead") == 0  # in flight in the dead-letter queue: it stays
    clock.advance(30)
    assert counts(service, "q.slow") == counts(service, "q") == QueueCounts(1, 0, 0)
    assert counts(service, "q.quick") == QueueCounts(0, 0, 0)

    # Redrive sends the dead letter back to the receiver it came from, and to it alone.
    assert service.redrive(ACCOUNT, "dead") == 1
    assert counts(service, "q.quick") == QueueCounts(1, 0, 0)
    assert counts(service, "q") == counts(service, "q.slow") == QueueCounts(1, 0, 0)
    (back,) = service.receive(ACCOUNT, "q.quick", 1, 0)
    assert (back.message.body, back.message.system_properties) == ("poison", ())


def test_a_receivers_attributes_are_set_through_its_address_and_shown_as_its_queues(service, clock):
    service.create_queue(ACCOUNT, "dead")
    service.create_queue(ACCOUNT, "q", QueueAttributeChanges(visibility_timeout="40", delay_seconds="3"))
    create(service, "r")
    view = service.get_queue(ACCOUNT, "q.r")
    assert (view.name, view.attributes.visibility_timeout, view.attributes.delay_seconds) == ("q.r", 40, 3)
    service.set_queue_attributes(
        ACCOUNT,
        "q.r",
        QueueAttributeChanges(polling_wait_seconds="5", dlq_policy=DlqPolicyInput("True", "dead", "4")),
    )
    view = service.get_queue(ACCOUNT, "q.r")
    assert (view.attributes.polling_wait_seconds, view.attributes.dlq_target) == (5, "dead")
    assert service.get_queue(ACCOUNT, "q").attributes.dlq_policy is None
    service.set_queue_attributes(ACCOUNT, "q", QueueAttributeChanges(visibility_timeout="50"))
    assert service.get_queue(ACCOUNT, "q.r").attributes.visibility_timeout == 50  # the queue's, not set on it
    for refused in (
        QueueAttributeChanges(delay_seconds="1"),
        QueueAttributeChanges(visibility_timeout="0"),
        QueueAttributeChanges(dlq_policy=DlqPolicyInput("True", "q", "4")),  # its own queue
    ):
        with pytest.raises(errors.InvalidArgument):
            service.set_queue_attributes(ACCOUNT, "q.r", refused)
    with pytest.raises(errors.QueueNotExist):
        service.set_queue_attributes(ACCOUNT, "q.r", QueueAttributeChanges(dlq_policy=DlqPolicyInput("True", "x", "4")))


def test_what_only_a_queue_takes_is_refused_at_an_address_and_unknown_ones_are_told_apart(service):
    service.create_queue(ACCOUNT, "q")
    create(service, "r")
    refusals = (
        lambda: service.send(ACCOUNT, "q.r", [MessageInput("m", None, 8)]),
        lambda: service.delete_queue(ACCOUNT, "q.r"),
        lambda: service.redrive(ACCOUNT, "q.r"),
    )
    for refused in refusals:
        with pytest.raises(errors.InvalidArgument):
            refused()
    with pytest.raises(errors.InvalidQueueName):  # (as MNS answers a name with a '.')
        service.create_queue(ACCOUNT, "q.s")
    with pytest.raises(errors.ReceiverNotExist):
        service.receive(ACCOUNT, "q.nobody", 1, 0)
    with pytest.raises(errors.QueueNotExist):
        service.receive(ACCOUNT, "nothing.r", 1, 0)
    with pytest.raises(errors.InvalidReceiverName):
        service.receive(ACCOUNT, "q.r.x", 1, 0)
    with pytest.raises(errors.MessageNotExist):
        service.receive(ACCOUNT, "q.r", 1, 0)


def test_creating_again_the_limit_and_deleting(service, clock):
    service.create_queue(ACCOUNT, "q")
    assert create(service, "r", visibility_timeout="60") == (True, False)
    assert create(service, "r", visibility_timeout="60") == (False, False)
    for differing in ({"visibility_timeout": "61"}, {"start_time": str(int(clock.now()) - 10)}):
        with pytest.raises(errors.ReceiverAlreadyExist):
            create(service, "r", **differing)
    for given in ({"start_time": str(int(clock.now()) + 5)}, {"start_time": "soon"}, {"polling_wait_seconds": "31"}):
        with pytest.raises(errors.InvalidArgument):
            create(service, "s", **given)
    with pytest.raises(errors.InvalidReceiverName):
        create(service, "-s")
    for n in range(15):
        create(service, f"r{n}")
    with pytest.raises(errors.ReceiverNumExceededLimit):
        create(service, "one-too-many")
    service.receivers.delete(ACCOUNT, "q", "r")
    service.receivers.delete(ACCOUNT, "q", "r")  # deleting a missing one succeeds
    with pytest.raises(errors.ReceiverNotExist):
        service.receivers.get(ACCOUNT, "q", "r")
    assert create(service, "one-more") == (True, False)
    with pytest.raises(errors.QueueNotExist):
        service.receivers.create(ACCOUNT, "nothing", "r", ReceiverInput())


def test_deleting_the_queue_deletes_its_receivers(service):
    service.create_queue(ACCOUNT, "q")
    create(service, "r")
    send(service, 3)
    service.delete_queue(ACCOUNT, "q")
    with pytest.raises(errors.QueueNotExist):
        service.receive(ACCOUNT, "q.r", 1, 0)
    service.create_queue(ACCOUNT, "q")
    with pytest.raises(errors.ReceiverNotExist):
        service.receive(ACCOUNT, "q.r", 1, 0)
    assert service.receivers.receivers_of(ACCOUNT, "q") == []


def test_dead_letters_into_a_queue_reach_its_receivers(service, clock):
    service.create_queue(ACCOUNT, "dead")
    service.receivers.create(ACCOUNT, "dead", "audit", ReceiverInput())
    service.create_queue(
        ACCOUNT, "q", QueueAttributeChanges(visibility_timeout="5", dlq_policy=DlqPolicyInput("True", "dead", "1"))
    )
    send(service, 2)
    assert len(service.receive(ACCOUNT, "q", 16, 0)) == 2
    clock.advance(6)
    with pytest.raises(errors.MessageNotExist):
        service.receive(ACCOUNT, "q", 16, 0)
    # and a subscription's dead letter (the push path's send into a queue) too
    service.services.dead_letters.send(ACCOUNT, "dead", "pushed", (), ())
    assert sorted(take_all(service, "dead.audit")) == ["m0", "m1", "pushed"]
    assert sorted(take_all(service, "dead")) == ["m0", "m1", "pushed"]


def test_turning_rewind_off_drops_what_the_receivers_kept_and_a_receiver_rewinds_alone(service, clock):
    service.create_queue(ACCOUNT, "q", QueueAttributeChanges(rewind_period="600"))
    create(service, "r")
    start = int(clock.now())
    send(service, 5)
    clock.advance(1)
    assert len(take_all(service, "q.r")) == 5
    assert service.rewind(ACCOUNT, "q.r", str(start)) == 5
    assert counts(service, "q.r") == QueueCounts(5, 0, 0)
    assert counts(service, "q") == QueueCounts(5, 0, 0)  # the queue's own were never received
    assert len(take_all(service, "q.r")) == 5
    service.set_queue_attributes(ACCOUNT, "q", QueueAttributeChanges(rewind_period="0"))
    with pytest.raises(errors.InvalidArgument):
        service.rewind(ACCOUNT, "q.r", str(start))
    service.set_queue_attributes(ACCOUNT, "q", QueueAttributeChanges(rewind_period="600"))
    assert service.rewind(ACCOUNT, "q.r", str(start)) == 0  # what it kept went with rewind off


def test_on_dynamodb_a_receiver_is_placed_as_a_queue_is_and_other_containers_find_its_placement(clock):
    client = SerializedClient(SimulatedDynamoDB())
    service = make_service(client, clock, queue_stripes=4)
    service.create_queue(ACCOUNT, "q")
    create(service, "r")
    receiver = service.get_queue(ACCOUNT, "q.r")
    settings = Settings(queue_stripes=4, credentials=f"{ACCOUNT}:KEYID:SECRET")
    other = QueuesByName(build_services(settings, dynamodb=client, clock=clock))  # another container: nothing cached
    placement = other.messages.placer.of(receiver.queue_id)
    assert (placement.stripes, placement.index_since) == (4, int(clock.now() * 1000))  # a new queue's, not a guess
    sent = send(other, 200)
    stripes = {r.message.message_id.split("-")[1] for r in receive_all(other, "q.r", rounds=20)}
    assert len(stripes) > 1  # its copies spread over its stripes
    clock.advance(31)
    assert sorted(take_all(service, "q.r")) == sorted(sent)


FIFO = QueueAttributeChanges(queue_type="fifo", visibility_timeout="30")


def send_groups(service, count: int, groups: int) -> list[str]:
    """`count` messages over `groups` groups (message n in group n % groups), sent in batches of 16: their bodies
    `g{group}:{n}`, in send order."""
    bodies = [f"g{n % groups}:{n}" for n in range(count)]
    for start in range(0, count, 16):
        batch = [
            MessageInput(body, None, 8, message_group_id=body.split(":")[0]) for body in bodies[start : start + 16]
        ]
        assert all(r.error is None for r in service.send(ACCOUNT, "q", batch))
    return bodies


def in_group_order(bodies: list[str]) -> dict[str, list[int]]:
    """Each group's message numbers, in the order they were received."""
    found: dict[str, list[int]] = {}
    for body in bodies:
        group, n = body.split(":")
        found.setdefault(group, []).append(int(n))
    return found


@LARGE
def test_two_receivers_of_a_fifo_queue_and_the_queue_each_get_1000_messages_every_group_in_order_on_its_own(service):
    service.create_queue(ACCOUNT, "q", FIFO)
    assert create(service, "a") == (True, False)
    assert create(service, "b") == (True, False)
    sent = send_groups(service, 1000, 50)
    received: dict[str, list[str]] = {name: [] for name in ("q", "q.a", "q.b")}

    def drain(name: str, keep: bool = False) -> list[str]:
        """Receive (and delete, unless `keep`) until nothing is receivable: the handles kept."""
        kept: list[str] = []
        for _ in range(1000):
            try:
                got = service.receive(ACCOUNT, name, 16, 0)
            except errors.MessageNotExist:
                return kept
            received[name] += [r.message.body for r in got]
            handles = [r.receipt_handle for r in got]
            if keep:
                return handles
            assert service.batch_delete(ACCOUNT, name, handles) == []
        raise AssertionError("never drained")

    held = drain("q.a", keep=True)  # receiver a's first run stays in flight while the others go through
    held_group = received["q.a"][0].split(":")[0]
    drain("q")
    drain("q.b")
    assert len(in_group_order(received["q"])[held_group]) == len(in_group_order(received["q.b"])[held_group]) == 20
    assert len(in_group_order(received["q.a"])[held_group]) < 20
    drain("q.a")  # the other groups of receiver a; its held group waits for its run
    assert service.batch_delete(ACCOUNT, "q.a", held) == []
    drain("q.a")  # then the rest of that group
    expected = in_group_order(sent)
    for name in received:
        assert sorted(received[name]) == sorted(sent), name  # each message once
        assert in_group_order(received[name]) == expected, name  # every group in send order


def test_a_fifo_queues_receiver_keeps_its_groups_apart_and_starts_when_created(service, clock):
    service.create_queue(ACCOUNT, "q", FIFO)
    with pytest.raises(errors.InvalidArgument, match="FIFO"):
        create(service, "early", start_time=str(int(clock.now()) - 60))
    assert service.receivers.receivers_of(ACCOUNT, "q") == []
    assert create(service, "r", start_time=str(int(clock.now()))) == (True, False)
    send_groups(service, 6, 2)  # g0: 0 2 4; g1: 1 3 5
    bodies = [r.message.body for r in receive_all(service, "q.r")]  # both groups' runs, now in flight in q.r
    assert in_group_order(bodies) == {"g0": [0, 2, 4], "g1": [1, 3, 5]}
    with pytest.raises(errors.MessageNotExist):
        service.receive(ACCOUNT, "q.r", 16, 0)
    assert in_group_order([r.message.body for r in receive_all(service, "q")]) == {"g0": [0, 2, 4], "g1": [1, 3, 5]}
    clock.advance(31)  # the receiver's runs lapse: its groups from their heads again, in order
    again = [r.message.body for r in receive_all(service, "q.r")]
    assert in_group_order(again) == {"g0": [0, 2, 4], "g1": [1, 3, 5]}
