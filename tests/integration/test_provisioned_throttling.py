"""Provisioned capacity (`-c capacity=provisioned`, docs/capacity.md) throttles with
`ProvisionedThroughputExceededException` (and, on a batch write, unprocessed items) where on demand rarely does:
a send, receive or delete that DynamoDB keeps refusing is tried again until the request's budget runs out and then
answered `ServiceUnavailable` (503, retryable), nothing acknowledged lost, and it succeeds once capacity is back."""

from __future__ import annotations

import time

import pytest
from botocore.exceptions import ClientError

from mnsd.ground import deadlines, errors
from mnsd.ground.settings import Settings
from mnsd.model.inputs import MessageInput
from mnsd.services import build_services
from tests.integration.services import ACCOUNT, make_service
from tests.support.by_name import QueuesByName
from tests.support.wrappers import Wrapping

BUDGET_SECONDS = 1.0
DATA_CALLS = ("batch_write_item", "update_item", "delete_item", "query", "get_item", "transact_write_items")


class Exceeded(Wrapping):
    """Refuses every data call on the message table as provisioned capacity does when exhausted, while `on`."""

    def __init__(self, inner, table: str) -> None:
        super().__init__(inner)
        self.table, self.on, self.refused = table, False, 0

    def __getattr__(self, name):
        call = getattr(self.inner, name)
        if name not in DATA_CALLS:
            return call

        def refusing(**kwargs):
            tables = {kwargs.get("TableName"), *kwargs.get("RequestItems", {})}
            if self.on and self.table in tables:
                self.refused += 1
                error = {"Code": "ProvisionedThroughputExceededException", "Message": "exceeded"}
                raise ClientError({"Error": error}, name)  # type: ignore[arg-type]
            return call(**kwargs)

        return refusing


@pytest.fixture
def throttled(dynamodb, clock):
    make_service(dynamodb, clock)  # the tables
    settings = Settings(poll_interval_ms=200, credentials=f"{ACCOUNT}:KEYID:SECRET")
    client = Exceeded(dynamodb, settings.message_table)
    service = QueuesByName(build_services(settings, dynamodb=client, clock=clock))
    service.create_queue(ACCOUNT, "q")
    service.send(ACCOUNT, "q", [MessageInput("kept", None, 8)])
    return service, client


def within_budget(call):
    """What `call` raised, or the error of a send's typed outcome, within the request's budget."""
    started = time.monotonic()
    with deadlines.within(BUDGET_SECONDS):
        try:
            answer = call()[0].error
        except errors.MnsError as refusal:
            answer = refusal
    assert time.monotonic() - started < 2 * BUDGET_SECONDS  # (the deadline, then a few quick last tries)
    return answer


@pytest.mark.parametrize("operation", ["send", "receive", "delete"])
def test_a_request_refused_for_capacity_until_its_deadline_is_a_retryable_503_and_loses_nothing(throttled, operation):
    service, client = throttled
    if operation == "delete":
        (held,) = service.receive(ACCOUNT, "q", 1, 0)
    calls = {
        "send": lambda: service.send(ACCOUNT, "q", [MessageInput("refused", None, 8)]),
        "receive": lambda: service.receive(ACCOUNT, "q", 1, 0),
        "delete": lambda: service.delete(ACCOUNT, "q", held.receipt_handle),
    }
    client.on = True
    refusal = within_budget(calls[operation])
    assert refusal is not None and (refusal.status, refusal.code) == (503, "ServiceUnavailable")
    assert client.refused > 1  # tried again before answering
    client.on = False
    if operation == "delete":  # the client's retry, with the same handle, deletes it
        service.delete(ACCOUNT, "q", held.receipt_handle)
        with pytest.raises(errors.MessageNotExist):
            service.receive(ACCOUNT, "q", 1, 0)
        return
    got = service.receive(ACCOUNT, "q", 16, 0)
    assert [r.message.body for r in got] == ["kept"]  # nothing acknowledged lost, nothing refused stored
