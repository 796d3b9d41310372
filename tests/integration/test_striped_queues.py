"""Striped queues on moto: a queue's messages spread over several partitions, every queue behaviour kept."""

from __future__ import annotations

import collections
import dataclasses

import pytest

from mnsd.ground import errors
from mnsd.ground.settings import Settings
from mnsd.model.inputs import MessageInput
from mnsd.model.queues import DlqPolicyInput, QueueAttributeChanges, QueueCounts
from mnsd.services import build_services
from mnsd.storage.dynamodb.items import layout
from mnsd.storage.dynamodb.items.layout import stripe_of
from mnsd.storage.dynamodb.tables.changes import message_changes
from tests.integration.placements import grow, placement
from tests.integration.receiving import receive_all
from tests.support.by_name import QueuesByName
from tests.support.wrappers import Wrapping

ACCOUNT = "1000000000000001"


def container(dynamodb, clock, **overrides):
    """Another service over the same tables (another function container)."""
    settings = Settings(credentials=f"{ACCOUNT}:KEYID:SECRET", poll_interval_ms=200, **overrides)
    return QueuesByName(build_services(settings, dynamodb=dynamodb, clock=clock))


def partitions(dynamodb, service) -> collections.Counter[str]:
    """Lease items per partition key."""
    items = dynamodb.scan(TableName=service.messages.table)["Items"]
    return collections.Counter(i["pk"]["S"] for i in items if i["sk"]["S"].startswith(layout.LEASE))


def send(service, bodies, name="q", delay=None, priority=8):
    results = service.send(ACCOUNT, name, [MessageInput(body, delay, priority) for body in bodies])
    assert all(r.error is None for r in results)
    return results


@pytest.fixture
def striped(make):
    service = make(queue_stripes=4)
    service.create_queue(ACCOUNT, "q", QueueAttributeChanges(visibility_timeout="30"))
    return service


def test_a_striped_queue_spreads_sends_over_its_stripes_and_receives_from_all(make, dynamodb):
    # One lease per message, each batch spread over the stripes (a packed batch is one item on one stripe).
    striped = make(queue_stripes=4, packed_batches=False)
    striped.create_queue(ACCOUNT, "q", QueueAttributeChanges(visibility_timeout="30"))
    queue = striped.get_queue(ACCOUNT, "q")
    assert placement(striped).stripes == 4
    sent = send(striped, [f"m{i}" for i in range(16)] * 4)
    stripes = {stripe_of(r.message.message_id) for r in sent}
    assert stripes == {0, 1, 2, 3}
    found = partitions(dynamodb, striped)
    assert set(found) == {queue.queue_id, *(f"{queue.queue_id}#{s}" for s in (1, 2, 3))}
    # Every message id names its stripe: `{16 hex}-{stripe + 1}-{ms hex}-{9 digits}`.
    for result in sent:
        hexa, stripe, ms_hex, digits = result.message.message_id.split("-")
        assert (len(hexa), int(stripe) - 1, len(digits)) == (16, stripe_of(result.message.message_id), 9)
        assert int(ms_hex, 16) == result.message.enqueue_time
    got = receive_all(striped)
    assert sorted(g.message.message_id for g in got) == sorted(r.message.message_id for r in sent)
    assert striped.queue_counts(queue) == QueueCounts(inactive=64)


def test_a_one_stripe_queue_keeps_todays_layout(make, dynamodb):
    service = make()
    service.create_queue(ACCOUNT, "q")
    queue = service.get_queue(ACCOUNT, "q")
    (sent,) = send(service, ["x"])
    assert sent.message.message_id.split("-")[1] == "1"
    assert partitions(dynamodb, service) == {queue.queue_id: 1}


def test_peek_delete_batch_delete_and_visibility_on_a_striped_queue(striped, clock):
    sent = send(striped, [f"m{i}" for i in range(12)])
    peeked = striped.peek(ACCOUNT, "q", 16)
    assert {m.body for m in peeked} == {f"m{i}" for i in range(12)}
    assert all(m.dequeue_count == 0 and m.body_md5 for m in peeked)
    got = receive_all(striped)
    assert len(got) == 12
    by_body = {g.message.body: g for g in got}
    striped.delete(ACCOUNT, "q", by_body["m0"].receipt_handle)
    with pytest.raises(errors.MessageNotExist):  # single use
        striped.delete(ACCOUNT, "q", by_body["m0"].receipt_handle)
    failures = striped.batch_delete(ACCOUNT, "q", [by_body[f"m{i}"].receipt_handle for i in range(1, 6)])
    assert failures == []
    handle, visible_at = striped.change_visibility(ACCOUNT, "q", by_body["m6"].receipt_handle, 5)
    with pytest.raises(errors.MessageNotExist):  # the old handle is spent
        striped.delete(ACCOUNT, "q", by_body["m6"].receipt_handle)
    clock.advance(6)
    (again,) = striped.receive(ACCOUNT, "q", 16, 0)
    assert (again.message.body, again.message.dequeue_count) == ("m6", 2)
    with pytest.raises(errors.MessageNotExist):  # its handle lapsed with the visibility change
        striped.delete(ACCOUNT, "q", handle)
    striped.delete(ACCOUNT, "q", again.receipt_handle)
    assert striped.queue_counts(striped.get_queue(ACCOUNT, "q")) == QueueCounts(inactive=5)
    assert len(sent) == 12 and visible_at > 0


def test_priority_is_kept_among_what_a_receive_reads(striped):
    send(striped, ["low"] * 3, priority=16)
    send(striped, ["high"], priority=1)
    got = striped.receive(ACCOUNT, "q", 16, 0)  # reads every stripe: all four in one page
    assert [g.message.body for g in got] == ["high", "low", "low", "low"]


def test_delayed_messages_and_long_polls_see_every_stripe(striped, clock):
    send(striped, [f"d{i}" for i in range(8)], delay=10)
    queue = striped.get_queue(ACCOUNT, "q")
    assert striped.queue_counts(queue) == QueueCounts(delayed=8)
    started = clock.now()
    got = striped.receive(ACCOUNT, "q", 16, 15)  # waits for the delay to pass, in whichever stripe
    assert clock.now() - started == pytest.approx(10, abs=0.5)
    assert {g.message.body for g in got} <= {f"d{i}" for i in range(8)} and got


def test_list_delete_and_recreate_a_striped_queue(striped, dynamodb):
    send(striped, ["old"] * 8)
    queues, _ = striped.list_queues(ACCOUNT, "", 10, None)
    assert [(q.name, placement(striped, q.name).stripes) for q in queues] == [("q", 4)]
    old = striped.get_queue(ACCOUNT, "q").queue_id
    striped.delete_queue(ACCOUNT, "q")
    with pytest.raises(errors.QueueNotExist):
        striped.receive(ACCOUNT, "q", 16, 0)
    striped.create_queue(ACCOUNT, "q")
    new = striped.get_queue(ACCOUNT, "q")
    assert new.queue_id != old
    with pytest.raises(errors.MessageNotExist):
        striped.receive(ACCOUNT, "q", 16, 0)
    assert striped.queue_counts(new) == QueueCounts()
    send(striped, ["new"])
    assert [g.message.body for g in receive_all(striped)] == ["new"]


def test_retention_on_a_striped_queue(make, clock, dynamodb):
    service = make(queue_stripes=4)
    service.create_queue(ACCOUNT, "q", QueueAttributeChanges(message_retention_period="60"))
    send(service, ["old"] * 8)
    clock.advance(61)
    queue = service.get_queue(ACCOUNT, "q")
    assert service.queue_counts(queue) == QueueCounts()
    with pytest.raises(errors.MessageNotExist):
        service.receive(ACCOUNT, "q", 16, 0)
    assert partitions(dynamodb, service) == {}  # each expired lease deleted when a receive met it
    send(service, ["new"])
    assert [g.message.body for g in receive_all(service)] == ["new"]


def test_a_receipt_handle_of_another_incarnation_or_mangled_is_refused(striped):
    send(striped, ["x"])
    (got,) = striped.receive(ACCOUNT, "q", 1, 0)
    with pytest.raises(errors.ReceiptHandleError):
        striped.delete(ACCOUNT, "q", got.receipt_handle[:-2] + "AA")
    striped.delete_queue(ACCOUNT, "q")
    striped.create_queue(ACCOUNT, "q")
    with pytest.raises(errors.ReceiptHandleError):
        striped.delete(ACCOUNT, "q", got.receipt_handle)


def test_the_operation_log_follows_striped_messages(make, dynamodb, clock):
    make()
    # One lease per message, the batch spread over the stripes (packed, a batch is one item on one stripe).
    settings = Settings(credentials=f"{ACCOUNT}:KEYID:SECRET", queue_stripes=4, packed_batches=False)
    services = build_services(settings, dynamodb, clock)
    queues = QueuesByName(services)
    queues.create_queue(ACCOUNT, "logged", QueueAttributeChanges(logging_enabled="true"))
    sent = [r.message for r in send(queues, ["a"] * 8, name="logged")]
    striped = next(m for m in sent if stripe_of(m.message_id) > 0)
    (lease,) = [i for i in layout.message_items(striped) if i["sk"]["S"].startswith(layout.LEASE)]
    assert lease["pk"]["S"].startswith(striped.queue_id + "#")
    record = {"eventID": "e1", "eventName": "INSERT", "dynamodb": {"NewImage": lease}}
    written = []
    services.queue_events().oplog = type("Log", (), {"write": lambda self, records: written.extend(records)})()
    assert services.queue_events().handle(message_changes([record])) == 1
    assert (written[0].resource, written[0].event, written[0].message_id) == ("logged", "send", striped.message_id)
    # A lease a receive deletes past its retention is logged as an expiry, not as a consumer's delete.
    removed = {
        "eventID": "e2",
        "eventName": "REMOVE",
        "dynamodb": {"OldImage": lease, "ApproximateCreationDateTime": striped.expires_at + 1},
    }
    services.queue_events().handle(message_changes([removed]))
    assert written[1].event == "expire"


@pytest.mark.parametrize("packed", [False, True], ids=["unpacked", "packed"])
def test_the_stripe_count_grows_with_messages_in_flight_and_none_is_lost_or_duplicated(make, clock, packed):
    service = make(max_queue_stripes=8, packed_batches=packed)
    service.create_queue(ACCOUNT, "q", QueueAttributeChanges(visibility_timeout="10"))
    first = {r.message.message_id for r in send(service, [f"a{i}" for i in range(16)] * 2)}
    held = receive_all(service)  # all in flight, in stripe 0
    assert {g.message.message_id for g in held} == first
    for stripes in (2, 4, 8):
        grow(service, stripes)
        assert placement(service).stripes == stripes
    second = {r.message.message_id for r in send(service, [f"b{i}" for i in range(16)] * 4)}
    if not packed:  # (packed, each batch is one item on one stripe)
        assert {stripe_of(m) for m in second} == set(range(8))
    got = receive_all(service)
    assert sorted(g.message.message_id for g in got) == sorted(second)  # the in-flight ones stay hidden
    assert service.batch_delete(ACCOUNT, "q", [g.receipt_handle for g in got[:16]]) == []
    for item in got[16:]:
        service.delete(ACCOUNT, "q", item.receipt_handle)
    clock.advance(11)  # the first ones are visible again, still in stripe 0, read by the 8-stripe receives
    again = receive_all(service)
    assert sorted(g.message.message_id for g in again) == sorted(first)
    assert [g.message.dequeue_count for g in again] == [2] * len(first)
    for item in again:
        service.delete(ACCOUNT, "q", item.receipt_handle)
    assert service.queue_counts(service.get_queue(ACCOUNT, "q")) == QueueCounts()


def test_growth_is_conditional_on_the_count_seen(make, dynamodb, clock):
    one, two = make(), container(dynamodb, clock)  # two containers sharing the table
    one.create_queue(ACCOUNT, "q")
    seen = placement(two)
    assert grow(one, 2).stripes == 2
    # The second container saw 1 stripe: its doubling does not apply; it gets the record as it is.
    assert grow(two, 2, seen=seen).stripes == 2
    assert grow(two, 4, seen=dataclasses.replace(seen, stripes=2)).stripes == 4
    assert grow(one, 8, seen=seen, queue_id="another").stripes != 8  # (no such incarnation)


def sent_x(client, clock):
    """A container over `client` whose new queue q was sent the message "x"."""
    service = container(client, clock)
    service.create_queue(ACCOUNT, "q")
    send(service, ["x"])
    return service


def test_a_throttled_claim_doubles_the_stripes(make, dynamodb, clock):
    from botocore.exceptions import ClientError

    class Throttling(Wrapping):
        throttle = 1

        def update_item(self, **kwargs):
            if kwargs.get("ReturnValues") == "ALL_NEW" and self.throttle:
                self.throttle -= 1
                raise ClientError({"Error": {"Code": "ProvisionedThroughputExceededException"}}, "UpdateItem")
            return self.inner.update_item(**kwargs)

    make()  # tables
    service = sent_x(Throttling(dynamodb), clock)
    # The first claim is throttled (the message stays Active); the receive looks again at once and takes it.
    assert [g.message.body for g in service.receive(ACCOUNT, "q", 1, 0)] == ["x"]
    assert placement(service).stripes == 2


def test_unprocessed_sends_double_the_stripes(make, dynamodb, clock):
    class Unprocessed(Wrapping):
        left = 1

        def batch_write_item(self, **kwargs):
            if self.left:
                self.left -= 1
                return {"UnprocessedItems": kwargs["RequestItems"]}
            return self.inner.batch_write_item(**kwargs)

    make()
    service = sent_x(Unprocessed(dynamodb), clock)  # stored on the retry
    assert placement(service).stripes == 2
    assert [g.message.body for g in service.receive(ACCOUNT, "q", 1, 0)] == ["x"]


class QueryCounter(Wrapping):
    """A client that counts the Queries made and the items they return."""

    def __init__(self, client) -> None:
        super().__init__(client)
        self.queries = 0
        self.items = 0

    def query(self, **kwargs):
        response = self.inner.query(**kwargs)
        self.queries += 1
        self.items += len(response["Items"])
        return response


def fill(service, clock, batches: int, name="q", delay=None) -> None:
    for _ in range(batches):
        send(service, ["x"] * 16, name=name, delay=delay)
        clock.advance(0.002)  # 16 messages every 2 ms or so


def test_counts_of_a_small_queue_are_exact(make, clock):
    service = make(queue_stripes=4)
    service.create_queue(ACCOUNT, "q", QueueAttributeChanges(visibility_timeout="60"))
    fill(service, clock, 10)
    fill(service, clock, 3, delay=30)
    clock.advance(1)
    assert len(receive_all(service, rounds=3)) == 48
    queue = service.get_queue(ACCOUNT, "q")
    assert service.queue_counts(queue) == QueueCounts(active=112, inactive=48, delayed=48)


@pytest.mark.parametrize("stripes", [1, 4])
def test_counts_of_a_large_queue_read_a_bounded_sample(make, dynamodb, clock, stripes, monkeypatch):
    from mnsd.storage.dynamodb.standard import stripe_counts

    # A queue many times the sample (the sample made small, so that moto fills the queue quickly).
    monkeypatch.setattr(stripe_counts, "COUNT_ITEMS", 100)
    monkeypatch.setattr(stripe_counts, "MIN_COUNT_ITEMS", 16)
    monkeypatch.setattr(stripe_counts, "PLAIN_COUNT_ITEMS", 100)
    make()
    # (filled at 8,000 messages/s, a rate that would grow the queue: its stripe count held for the sample's bound)
    service = container(dynamodb, clock, queue_stripes=stripes, max_queue_stripes=stripes)
    service.create_queue(ACCOUNT, "q")
    fill(service, clock, 100)  # 1,600 Active messages
    fill(service, clock, 40, delay=600)  # 640 Delayed
    clock.advance(1)
    counter = QueryCounter(dynamodb)
    service.messages.client = counter
    counts = service.queue_counts(service.get_queue(ACCOUNT, "q"))
    assert counter.items < 2240 / 2  # far from every lease
    assert counts.inactive == 0
    if stripes == 1:  # a quiet queue's: its first and last leases in queue order, from the table
        assert counter.items <= 2 * stripe_counts.PLAIN_COUNT_ITEMS and counter.queries <= 2
        # The total estimated from their send times; the states in the proportions of both pages.
        assert counts.active + counts.delayed == pytest.approx(2240, rel=0.15)
        return
    per_range = max(100, stripes * 16)
    assert counter.items <= 4 * per_range and counter.queries <= 4 * stripes
    assert counts.active == pytest.approx(1600, rel=0.15)
    assert counts.delayed == pytest.approx(640, rel=0.15)


def test_a_receive_reads_no_lease_in_flight(make, dynamodb, clock):
    make()
    service = container(dynamodb, clock, max_queue_stripes=1)  # (one stripe, whatever the fill's rate)
    service.create_queue(ACCOUNT, "q", QueueAttributeChanges(visibility_timeout="600"))
    fill(service, clock, 10)
    assert len(receive_all(service, rounds=30)) == 160  # all in flight
    # Read from the table, those receives read the leases in flight: enough to turn the queue's index on.
    assert placement(service).spread.indexing
    clock.advance(service.settings.index_settle_seconds)
    while placement(service).spread.plain:  # receives build it (over the leases written before)
        with pytest.raises(errors.MessageNotExist):
            service.receive(ACCOUNT, "q", 16, 0)
    send(service, ["ready"])
    counter = QueryCounter(dynamodb)
    service.messages.client = counter
    (got,) = service.receive(ACCOUNT, "q", 1, 0)
    assert got.message.body == "ready"
    assert (counter.queries, counter.items) == (1, 1)  # the index page held only what it could claim


def test_a_recreated_queue_is_a_new_incarnation_across_containers(make, dynamodb, clock):
    one = make(meta_cache_seconds=5, queue_stripes=4)
    two = container(dynamodb, clock, meta_cache_seconds=5, queue_stripes=4)
    one.create_queue(ACCOUNT, "q")
    old = two.get_queue(ACCOUNT, "q")  # cached in the second container
    assert old.queue_id == one.get_queue(ACCOUNT, "q").queue_id
    one.delete_queue(ACCOUNT, "q")
    one.create_queue(ACCOUNT, "q")
    new = one.get_queue(ACCOUNT, "q")  # this container's own writes: seen at once
    assert new.queue_id != old.queue_id
    # Within the bound, the second container still sends to the old incarnation, whose messages the new
    # one never sees.
    stale = {r.message.message_id for r in send(two, ["stale"] * 8)}
    assert {r.message.queue_id for r in two.send(ACCOUNT, "q", [MessageInput("stale", None, 8)])} == {old.queue_id}
    with pytest.raises(errors.MessageNotExist):
        one.receive(ACCOUNT, "q", 16, 0)
    send(one, ["fresh"] * 4)
    clock.advance(5)  # past the bound: the second container reads the record again
    assert two.get_queue(ACCOUNT, "q").queue_id == new.queue_id
    got = receive_all(two)
    assert [g.message.body for g in got] == ["fresh"] * 4
    assert not stale & {g.message.message_id for g in got}
    assert one.queue_counts(new) == QueueCounts(inactive=4)


def test_a_queue_changed_elsewhere_is_seen_within_the_bound(make, dynamodb, clock):
    one = make(meta_cache_seconds=5)
    two = container(dynamodb, clock, meta_cache_seconds=5)
    one.create_queue(ACCOUNT, "q")
    assert two.get_queue(ACCOUNT, "q").attributes.visibility_timeout == 30
    one.set_queue_attributes(ACCOUNT, "q", QueueAttributeChanges(visibility_timeout="60"))
    assert one.get_queue(ACCOUNT, "q").attributes.visibility_timeout == 60
    clock.advance(4.9)
    assert two.get_queue(ACCOUNT, "q").attributes.visibility_timeout == 30  # the cache, within the bound
    clock.advance(0.2)
    assert two.get_queue(ACCOUNT, "q").attributes.visibility_timeout == 60
    one.delete_queue(ACCOUNT, "q")
    clock.advance(5.1)
    with pytest.raises(errors.QueueNotExist):
        two.get_queue(ACCOUNT, "q")


def test_the_queue_record_is_read_once_per_bound(make, dynamodb, clock):
    make()
    counted = []

    class Gets(Wrapping):
        def get_item(self, **kwargs):
            counted.append(kwargs["TableName"])
            return dynamodb.get_item(**kwargs)

    service = container(Gets(dynamodb), clock, meta_cache_seconds=5)
    service.create_queue(ACCOUNT, "q")
    counted.clear()
    for _ in range(10):
        send(service, ["x"])
        service.delete(ACCOUNT, "q", service.receive(ACCOUNT, "q", 1, 0)[0].receipt_handle)
    assert counted == []
    clock.advance(5)
    send(service, ["x"])
    assert counted == [service.settings.meta_table]


@pytest.mark.parametrize("packed", [False, True], ids=["unpacked", "packed"])
def test_dead_letters_redrive_and_rewind_on_striped_queues(make, dynamodb, clock, packed):
    """Moves land in the target's stripes; redrive, rewind and dropping kept messages reach every stripe."""
    service = make(queue_stripes=4, packed_batches=packed)
    service.create_queue(ACCOUNT, "dlq")
    policy = DlqPolicyInput("True", "dlq", "1")
    service.create_queue(ACCOUNT, "q", QueueAttributeChanges(visibility_timeout="10", dlq_policy=policy))
    sent = {r.message.message_id for r in send(service, [f"m{i}" for i in range(32)])}
    assert len(receive_all(service)) == 32
    clock.advance(11)
    with pytest.raises(errors.MessageNotExist):  # each was received once: the next receive moves it
        service.receive(ACCOUNT, "q", 16, 0)
    dlq = service.get_queue(ACCOUNT, "dlq")
    dead = receive_all(service, "dlq")
    assert sorted(p.value for g in dead for p in g.message.system_properties if p.name == "DLQOriginMessageId") == (
        sorted(sent)
    )
    if not packed:  # (the layout of one lease per message; packed, each batch of 16 is one item on one stripe)
        assert {stripe_of(g.message.message_id) for g in dead} == {0, 1, 2, 3}
        assert len({k for k in partitions(dynamodb, service) if layout.queue_id_of(k) == dlq.queue_id}) == 4
    clock.advance(31)  # the dead letters visible again: redrive takes them all back
    assert service.redrive(ACCOUNT, "dlq") == 32
    assert sorted(g.message.body for g in receive_all(service)) == sorted(f"m{i}" for i in range(32))

    service.create_queue(ACCOUNT, "kept", QueueAttributeChanges(rewind_period="600"))
    kept = service.get_queue(ACCOUNT, "kept")
    start = int(clock.now())
    send(service, [f"k{i}" for i in range(32)], name="kept")
    for got in receive_all(service, "kept"):
        service.delete(ACCOUNT, "kept", got.receipt_handle)
    kept_partitions = len({k for k in partitions(dynamodb, service) if layout.queue_id_of(k) == kept.queue_id})
    assert 1 <= kept_partitions <= 2 if packed else kept_partitions == 4  # (packed: its two batches' stripes)
    assert service.rewind(ACCOUNT, "kept", str(start)) == 32
    again = receive_all(service, "kept")
    assert sorted(g.message.body for g in again) == sorted(f"k{i}" for i in range(32))
    for got in again:
        service.delete(ACCOUNT, "kept", got.receipt_handle)
    service.set_queue_attributes(ACCOUNT, "kept", QueueAttributeChanges(rewind_period="0"))
    assert not any(layout.queue_id_of(k) == kept.queue_id for k in partitions(dynamodb, service))


def test_a_burst_grows_the_queue_before_any_send_is_refused(clock):
    """On the DynamoDB double, which refuses a partition's requests past 1,000 WCU in a second, as DynamoDB
    does without burst capacity: a queue that starts at 5,000 messages/s grows with the rate it sees."""
    from local_runtime.tables import create_tables
    from tests.support.simulator.dynamodb import SimulatedDynamoDB

    double = SimulatedDynamoDB(now=clock.now, throttle=True)
    settings = Settings(credentials=f"{ACCOUNT}:KEYID:SECRET")
    create_tables(double, settings)
    service = QueuesByName(build_services(settings, dynamodb=double, clock=clock))
    service.create_queue(ACCOUNT, "q")
    body = "x" * 700  # a lease of about 1 KB: one write unit per message and partition
    for _ in range(40):  # 2 s: 250 messages every 50 ms, in batches of 16
        for count in [16] * 15 + [10]:
            send(service, [body] * count)  # (fails on the first message not stored)
        clock.advance(0.05)
    assert not double.usage.throttled  # not one request refused
    assert placement(service).stripes == 64
    second = int(clock.now()) - 1
    assert max(w for w, _ in double.usage.per_second[second].values()) < 500
