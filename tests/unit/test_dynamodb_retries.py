"""Every DynamoDB outcome handled by its kind (`mnsd.storage.dynamodb.retries`), on a scripted client."""

from __future__ import annotations

import time
from typing import Any

import pytest
from botocore.exceptions import ClientError, EndpointConnectionError, ReadTimeoutError

from mnsd.ground import deadlines, errors
from mnsd.storage.dynamodb.retries import RetryingClient, Unavailable, assignments


def refusal(code: str, reasons: list[str] | None = None) -> ClientError:
    response: dict[str, Any] = {"Error": {"Code": code, "Message": code}}
    if reasons is not None:
        response["CancellationReasons"] = [{"Code": reason} for reason in reasons]
    return ClientError(response, "Op")  # type: ignore[arg-type]


class Scripted:
    """A client whose calls of each operation answer, in turn, what the script says (an exception is raised)."""

    def __init__(self, **script: list[Any]) -> None:
        self.script = script
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def __getattr__(self, name: str) -> Any:
        def call(**request: Any) -> Any:
            self.calls.append((name, request))
            outcome = self.script[name].pop(0)
            if isinstance(outcome, BaseException):
                raise outcome
            return outcome

        return call


def client(scripted: Scripted, throttled: list[dict[str, Any]] | None = None) -> RetryingClient:
    return RetryingClient(scripted, None if throttled is None else throttled.append, sleep=lambda s: None)


LOST = ReadTimeoutError(endpoint_url="https://dynamodb")
CONDITION = refusal("ConditionalCheckFailedException")


@pytest.mark.parametrize(
    "busy",
    [
        refusal("ThrottlingException"),
        refusal("ProvisionedThroughputExceededException"),
        refusal("TransactionConflictException"),
        refusal("InternalServerError"),
        refusal("TransactionCanceledException", ["None", "TransactionConflict"]),
        EndpointConnectionError(endpoint_url="https://dynamodb"),
    ],
)
def test_a_busy_or_unreached_dynamodb_is_tried_again(busy):
    scripted = Scripted(update_item=[busy, busy, {"Attributes": {}}])
    assert client(scripted).update_item(TableName="t", Key={}) == {"Attributes": {}}
    assert len(scripted.calls) == 3


def test_a_throttled_request_is_told_and_a_conditional_refusal_is_not_retried():
    told: list[dict[str, Any]] = []
    scripted = Scripted(delete_item=[refusal("ThrottlingException"), CONDITION])
    with pytest.raises(ClientError) as raised:
        client(scripted, told).delete_item(TableName="t", Key={"pk": {"S": "q#1"}})
    assert raised.value.response["Error"]["Code"] == "ConditionalCheckFailedException"
    assert not isinstance(raised.value, errors.MnsError)
    assert len(scripted.calls) == 2 and told == [{"TableName": "t", "Key": {"pk": {"S": "q#1"}}}]


@pytest.mark.parametrize("reasons", [["ConditionalCheckFailed", "TransactionConflict"], ["ValidationError"]])
def test_a_transaction_cancelled_for_its_conditions_is_the_callers(reasons):
    scripted = Scripted(transact_write_items=[refusal("TransactionCanceledException", reasons)])
    with pytest.raises(ClientError):
        client(scripted).transact_write_items(TransactItems=[])
    assert len(scripted.calls) == 1


def test_every_attempt_of_a_transaction_carries_one_client_request_token():
    conflict = refusal("TransactionCanceledException", ["TransactionConflict"])
    scripted = Scripted(transact_write_items=[conflict, LOST, {}])
    client(scripted).transact_write_items(TransactItems=[])
    tokens = {request["ClientRequestToken"] for _, request in scripted.calls}
    assert len(scripted.calls) == 3 and len(tokens) == 1


def test_still_busy_at_the_end_of_the_requests_budget_is_a_retryable_mns_error_that_is_still_the_client_error():
    scripted = Scripted(query=[refusal("ThrottlingException")] * 1000)
    slept: list[float] = []
    retrying = RetryingClient(scripted, sleep=lambda s: (slept.append(s), time.sleep(s)))
    started = time.monotonic()
    with deadlines.within(1.0), pytest.raises(Unavailable) as raised:
        retrying.query(TableName="t")
    elapsed = time.monotonic() - started
    assert 0.75 < elapsed < 1.0  # the request's budget, less the margin to answer
    assert raised.value.status == 503 and raised.value.code == "ServiceUnavailable"
    assert raised.value.response["Error"]["Code"] == "ThrottlingException"
    assert len(set(slept[:-1])) == len(slept) - 1  # jittered (the last pause: what was left)


def test_a_request_past_its_budget_tries_once():
    scripted = Scripted(get_item=[refusal("ThrottlingException"), {}])
    with deadlines.within(0.0), pytest.raises(Unavailable):
        client(scripted).get_item(TableName="t", Key={})
    assert len(scripted.calls) == 1


KEY = {"pk": {"S": "q#0"}, "sk": {"S": "L1"}}


def test_a_delete_whose_answer_was_lost_and_that_is_gone_was_done():
    scripted = Scripted(delete_item=[LOST, CONDITION], get_item=[{}])
    assert client(scripted).delete_item(TableName="t", Key=KEY, ConditionExpression="r = :v") == {}
    assert scripted.calls[-1] == ("get_item", {"TableName": "t", "Key": KEY, "ConsistentRead": True})


def test_a_delete_whose_answer_was_lost_and_whose_item_is_there_was_refused():
    scripted = Scripted(delete_item=[LOST, CONDITION], get_item=[{"Item": KEY}])
    with pytest.raises(ClientError):
        client(scripted).delete_item(TableName="t", Key=KEY, ConditionExpression="r = :v")


UPDATE = {
    "TableName": "t",
    "Key": KEY,
    "UpdateExpression": "SET v = :vis, r = :next, d = d + :one, f = if_not_exists(f, :now) REMOVE k",
    "ConditionExpression": "r = :ver",
    "ExpressionAttributeValues": {":vis": {"N": "9"}, ":next": {"N": "2"}, ":one": {"N": "1"}, ":ver": {"N": "1"}},
}


def test_an_update_whose_answer_was_lost_and_whose_assignments_are_there_was_done():
    item = {**KEY, "v": {"N": "9"}, "r": {"N": "2"}, "d": {"N": "1"}}
    scripted = Scripted(update_item=[LOST, CONDITION], get_item=[{"Item": item}])
    assert client(scripted).update_item(**UPDATE) == {"Attributes": item}


def test_an_update_whose_answer_was_lost_and_changed_by_another_was_refused():
    item = {**KEY, "v": {"N": "7"}, "r": {"N": "2"}}  # another consumer's claim of the same version
    scripted = Scripted(update_item=[LOST, CONDITION], get_item=[{"Item": item}])
    with pytest.raises(ClientError):
        client(scripted).update_item(**UPDATE)


def test_a_condition_refused_without_a_lost_answer_is_not_read_back():
    scripted = Scripted(delete_item=[CONDITION])
    with pytest.raises(ClientError):
        client(scripted).delete_item(TableName="t", Key=KEY, ConditionExpression="r = :v")
    assert [name for name, _ in scripted.calls] == ["delete_item"]


def test_the_plain_assignments_of_an_update():
    update = "SET #n = :n, q = if_not_exists(q, :zero) + :c, x = :x, w = :a REMOVE k ADD s :one"
    assert assignments(update, {"#n": "name"}) == [("name", ":n"), ("x", ":x"), ("w", ":a")]


def test_the_plain_assignments_of_an_update_its_model_serialised():
    from mnsd.storage.dynamodb.items.groups import GroupItem, hold, update_request

    actions = [GroupItem.n.set(GroupItem.n + 1), hold(5).set(7), GroupItem.c.set(3), GroupItem.o.remove()]
    request = update_request("m", {"pk": {"S": "q1#D0"}, "sk": {"S": "Ga"}}, actions)
    names = request["ExpressionAttributeNames"]
    assigned = [(name, request["ExpressionAttributeValues"][value]) for name, value in assignments(
        request["UpdateExpression"], names
    )]  # fmt: skip
    assert assigned == [("t_5", {"N": "7"}), ("c", {"N": "3"})]


def test_the_queues_a_throttled_request_wrote():
    from mnsd.storage.dynamodb.retries import throttled_partitions

    put = {"PutRequest": {"Item": {"pk": {"S": "q1#3"}, "sk": {"S": "L1"}}}}
    assert throttled_partitions("m", {"TableName": "m", "Key": {"pk": {"S": "q1#0"}}}) == {"q1"}
    assert throttled_partitions("m", {"RequestItems": {"m": [put]}}) == {"q1"}
    assert throttled_partitions("m", {"RequestItems": {"m": {"Keys": [{"pk": {"S": "q1#0"}}]}}}) == set()
    assert throttled_partitions("m", {"TableName": "meta", "Key": {"pk": {"S": "q1#0"}}}) == set()


def put(pk: str, sk: str) -> dict[str, Any]:
    return {"PutRequest": {"Item": {"pk": {"S": pk}, "sk": {"S": sk}, "b": {"S": "body"}}}}


def test_a_batch_whose_answer_was_lost_is_sent_again_without_the_items_that_are_there():
    written = {"pk": {"S": "q#0"}, "sk": {"S": "L1"}, "r": {"N": "2"}}  # written, then claimed by a consumer
    scripted = Scripted(
        batch_write_item=[LOST, {"UnprocessedItems": {}}],
        batch_get_item=[{"Responses": {"m": [written]}}],
    )
    batch = [put("q#0", "L1"), put("q#1", "L2"), {"DeleteRequest": {"Key": {"pk": {"S": "q#2"}, "sk": {"S": "L3"}}}}]
    assert client(scripted).batch_write_item(RequestItems={"m": batch}) == {"UnprocessedItems": {}}
    (_, read), (_, again) = scripted.calls[1], scripted.calls[2]
    assert read["RequestItems"]["m"]["ConsistentRead"] and len(read["RequestItems"]["m"]["Keys"]) == 2
    assert again["RequestItems"] == {"m": batch[1:]}  # the claimed lease is not written over


def test_a_batch_whose_answer_was_lost_and_whose_items_are_all_there_is_done():
    scripted = Scripted(
        batch_write_item=[LOST],
        batch_get_item=[{"Responses": {"m": [{"pk": {"S": "q#0"}, "sk": {"S": "L1"}}]}}],
    )
    assert client(scripted).batch_write_item(RequestItems={"m": [put("q#0", "L1")]}) == {"UnprocessedItems": {}}
    assert len(scripted.calls) == 2
