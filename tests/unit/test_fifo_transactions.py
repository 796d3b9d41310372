"""How the DynamoDB engine's ordered writes take a failed transaction: a condition that did not hold is a refusal;
throttling or a conflicting write is tried again, and then raised by a delete (a message reported deleted that is
not would come back) but given up by a claim (the receive reads again)."""

from __future__ import annotations

import pytest
from botocore.exceptions import ClientError

from local_runtime.tables import create_tables
from mnsd.ground.settings import Settings
from mnsd.storage.dynamodb import dynamodb_storage
from tests.support.fifo_stored import NOW, VISIBLE, offer, send, take
from tests.support.simulator.dynamodb import SimulatedDynamoDB


def failing(code: str, reasons: list[str] | None = None):
    calls = []

    def transact_write_items(**_):
        calls.append(1)
        response = {"Error": {"Code": code, "Message": "no"}}
        if reasons is not None:
            response["CancellationReasons"] = [{"Code": reason} for reason in reasons]
        raise ClientError(response, "TransactWriteItems")

    return transact_write_items, calls


@pytest.fixture
def storage():
    client = SimulatedDynamoDB()
    create_tables(client, Settings())
    return dynamodb_storage(client, Settings())


@pytest.fixture
def claimed(storage):
    send(storage, "a", "a")
    run = take(storage, NOW + 10, 1, VISIBLE)
    assert len(run) == 1
    return run[0]


def test_a_condition_that_did_not_hold_is_a_refusal(storage, claimed):
    storage.fifo_messages.client.transact_write_items, calls = failing(
        "TransactionCanceledException", ["ConditionalCheckFailed", "None"]
    )
    assert storage.fifo_messages.delete_many([(claimed.ref, claimed.version)], NOW + 20)[0] is False
    assert len(calls) == 1


@pytest.mark.parametrize(
    ("code", "reasons"),
    [
        ("ProvisionedThroughputExceededException", None),
        ("TransactionCanceledException", ["None", "TransactionConflict"]),
    ],
)
def test_a_throttled_or_conflicting_delete_is_retried_then_raised(storage, claimed, code, reasons):
    storage.fifo_messages.client.transact_write_items, calls = failing(code, reasons)
    with pytest.raises(ClientError):
        storage.fifo_messages.delete_many([(claimed.ref, claimed.version)], NOW + 20)[0]
    assert len(calls) == 4


def test_a_throttled_claim_is_given_up_at_once(storage):
    send(storage, "b")
    offered = offer(storage, NOW + 10)
    storage.fifo_messages.client.transact_write_items, calls = failing("ThrottlingException")
    assert offered.claim(offered.messages, 1, NOW + 10, VISIBLE) == []
    assert len(calls) == 1


def test_another_error_is_raised_at_once(storage, claimed):
    storage.fifo_messages.client.transact_write_items, calls = failing("ValidationException")
    with pytest.raises(ClientError):
        storage.fifo_messages.delete_many([(claimed.ref, claimed.version)], NOW + 20)[0]
    assert len(calls) == 1


def counting(storage):
    """The FIFO store's transactions, counted (each call passed on)."""
    store = storage.fifo_messages
    real, calls = store.client.transact_write_items, []

    def transact_write_items(**kwargs):
        calls.append(len(kwargs["TransactItems"]))
        return real(**kwargs)

    store.client.transact_write_items = transact_write_items
    return calls


def test_a_batch_delete_of_a_run_is_one_transaction(storage):
    send(storage, *["a"] * 16)
    run = take(storage, NOW + 10, 16, VISIBLE)
    assert len(run) == 16
    calls = counting(storage)
    assert storage.fifo_messages.delete_many([(m.ref, m.version) for m in run], NOW + 20) == [True] * 16
    assert calls == [17]  # the run's leases and their group item
    assert take(storage, NOW + 30, 16, VISIBLE) == []  # all gone, the group emptied


def test_a_run_delete_with_a_stale_handle_deletes_the_others_alone(storage):
    send(storage, "a", "a", "a")
    run = take(storage, NOW + 10, 3, VISIBLE)
    calls = counting(storage)
    handles = [(m.ref, m.version) for m in run]
    handles[1] = (run[1].ref, run[1].version + 1)  # no longer the lease's
    assert storage.fifo_messages.delete_many(handles, NOW + 20) == [True, False, True]
    assert calls == [4, 2, 2, 2]  # the run refused whole, then each alone
    assert storage.fifo_messages.delete_many([(run[1].ref, run[1].version)], NOW + 21) == [True]


def test_a_batch_delete_of_two_groups_is_one_transaction_each(storage):
    send(storage, "a", "b", "a", "b")
    taken = take(storage, NOW + 10, 4, VISIBLE)
    assert len(taken) == 4
    calls = counting(storage)
    assert storage.fifo_messages.delete_many([(m.ref, m.version) for m in taken], NOW + 20) == [True] * 4
    assert calls == [3, 3]
