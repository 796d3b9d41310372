"""A receive through the wait tier at the origin: the service's typed outcome (`MessageService.receive_or_hold`),
the headers the adapter makes of it (`mnsd.operations.receive_message`), the tier's signature, and the holder reading those
headers with the same contract (`mnsd.waiting.contract`, imported by both)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import closing
from typing import get_type_hints

import pytest
from multidict import CIMultiDict

from mnsd.calls.call import Call
from mnsd.ground import deadlines
from mnsd.ground.settings import Settings
from mnsd.model.inputs import MessageInput
from mnsd.operations import receive_message
from mnsd.operations.receive_message import tier_headers
from mnsd.queues.messages import Claimed, Hold
from mnsd.services import Services, build_services
from mnsd.storage.sqlite import sqlite_storage
from mnsd.waiting import contract
from tests.support.clocks import ManualClock
from wait_tier.origin import Answer

ACCOUNT = "1000000000000001"


@pytest.fixture
def services() -> Iterator[Services]:
    """Over the embedded engine in memory, on a clock moved by hand (`services.clock`)."""
    storage = sqlite_storage(":memory:")
    with closing(storage.database):
        yield build_services(Settings(credentials=f"{ACCOUNT}:KEYID:SECRET"), storage=storage, clock=ManualClock())


def queue(services: Services, *bodies: str, delay: int = 0):
    services.queues.create_queue(ACCOUNT, "orders")
    found = services.addresses.resolve(ACCOUNT, "orders")
    if bodies:
        services.messages.send(found, [MessageInput(body, delay, 8) for body in bodies])
    return found


def ms(seconds: float) -> int:
    return int(seconds * 1000)


def test_nothing_receivable_is_a_hold_until_the_clients_wait_ends(services) -> None:
    clock = services.clock
    q = queue(services)
    assert services.messages.receive_or_hold(q, 1, 10, None, None) == Hold(ms(clock.now()) + 10_000, None)
    # Never past the last claim the platform's 30 s timeout allows, counted from the arrival.
    arrived = clock.now() - 1
    assert services.messages.receive_or_hold(q, 1, 30, arrived, None).until_ms == ms(arrived) + 28_000


def test_a_receive_asked_again_keeps_the_deadline_of_its_first_arrival(services) -> None:
    clock = services.clock
    q = queue(services)
    first = services.messages.receive_or_hold(q, 1, 20, None, None)
    clock.advance(5)
    assert isinstance(first, Hold)
    assert services.messages.receive_or_hold(q, 1, 20, None, first.until_ms) == first
    clock.advance(20)
    late = services.messages.receive_or_hold(q, 1, 20, None, first.until_ms)
    assert isinstance(late, Hold) and late.until_ms <= ms(clock.now())  # the holder answers at once


def test_a_hold_says_when_a_delayed_message_becomes_receivable_within_the_wait(services) -> None:
    clock = services.clock
    q = queue(services, "later", delay=3)
    hold = services.messages.receive_or_hold(q, 1, 10, None, None)
    assert hold == Hold(ms(clock.now()) + 10_000, ms(clock.now()) + 3_000)
    assert services.messages.receive_or_hold(q, 1, 2, None, None) == Hold(ms(clock.now()) + 2_000, None)


def test_a_claim_says_what_it_left_and_when_its_lease_ends(services) -> None:
    clock = services.clock
    q = queue(services, "a", "b", "c")
    claimed = services.messages.receive_or_hold(q, 2, 10, None, None)
    assert isinstance(claimed, Claimed)
    assert len(claimed.received) == 2
    assert claimed.more == 1
    assert claimed.due_ms == ms(clock.now()) + q.attributes.visibility_timeout * 1000


def test_the_adapter_turns_each_outcome_into_the_contracts_headers() -> None:
    assert tier_headers("mns.q", Hold(5_000, 3_000)) == {
        contract.CHANNEL_HEADER: "mns.q",
        contract.HOLD_HEADER: "5000",
        contract.DUE_HEADER: "3000",
    }
    assert contract.DUE_HEADER not in tier_headers("mns.q", Hold(5_000, None))
    assert tier_headers("mns.q", Claimed([], 0, 9_000)) == {
        contract.CHANNEL_HEADER: "mns.q",
        contract.CLAIMED_HEADER: "0",
        contract.DUE_HEADER: "9000",
    }
    assert tier_headers("mns.q", Claimed([], 4, 9_000))[contract.MORE_HEADER] == "4"


def test_the_holder_reads_the_layers_headers_and_its_client_sees_none_of_them() -> None:
    """The layer's and the tier's contract are one module; this holds the two sides' use of it together."""
    outcome = Claimed([], 2, 9_000)
    headers = CIMultiDict({**tier_headers("mns.q", outcome), "x-mns-request-id": "r", "Content-Length": "9"})
    headers[contract.CLAIMED_HEADER] = "3"
    answer = Answer(200, "OK", headers, b"")
    assert answer.claimed() == 3
    assert answer.header(contract.MORE_HEADER) == "2" and answer.header(contract.CHANNEL_HEADER) == "mns.q"
    assert answer.for_client() == [("x-mns-request-id", "r")]
    held = Answer(404, "Not Found", CIMultiDict(tier_headers("mns.q", Hold(5_000, None))), b"")
    assert held.header(contract.HOLD_HEADER) == "5000" and held.for_client() == []


def test_the_tiers_signature_verifies_with_its_key_until_it_expires() -> None:
    now = 1_800_000_000.0
    token = contract.sign("key", now, lifetime=60)
    assert contract.verify(token, "key", now)
    assert not contract.verify(token, "other", now)
    assert not contract.verify(token, "key", now + 61)
    header, claims, mac = token.split(".")
    assert not contract.verify(f"{header}.{claims}.{mac[:-2]}AA", "key", now)
    assert not contract.verify("not.a.jwt", "key", now) and not contract.verify("", "key", now)


def test_a_wake_names_the_queues_channel() -> None:
    assert contract.wake_document("q:1/x", count=3) == {"channel": "mns.q_1_x", "count": 3}
    assert contract.wake_document("q", at_ms=7) == {"channel": "mns.q", "at": 7}


def test_the_tiers_times_keep_a_held_receive_within_the_platforms_30_s() -> None:
    """A woken receive asks the origin before the origin's last claim; a hold ends before the HTTP API's cut (the
    origin's own bound, from when the request reached it, no later than the tier's)."""
    assert contract.LAST_ASK_MS < deadlines.LAST_CLAIM_SECONDS * 1000
    assert deadlines.HOLD_SECONDS * 1000 <= contract.MAX_HOLD_MS < deadlines.ANSWER_SECONDS * 1000 - 1000


def test_the_receives_answer_takes_the_call_itself():
    """Beside the operations it serves (`mnsd.operations.receive_message`), a receive's answer names the call's own
    type: no Protocol of its shape (which it needed in `mnsd.waiting`, below the call's room, to dodge a circle)."""
    for function in (receive_message.receive, receive_message.tier_answer):
        assert get_type_hints(function)["call"] is Call
    protocols = [name for name, value in vars(receive_message).items() if getattr(value, "_is_protocol", False)]
    assert not protocols
