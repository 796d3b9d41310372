"""The benchmarks' in-memory DynamoDB (tests/support/simulator/dynamodb.py) answers and bills as moto and DynamoDB do.

The same scenarios run on moto and on the simulator; their responses, their errors and the units
recorded (moto through tests/support/recording.py, the simulator by itself) must agree. Index billing and
per-partition throttling, which moto does not model, are checked against DynamoDB's documented rules.
A few of the queue service's moto tests also run on the simulator (imported below, `dynamodb` overridden).
"""

from __future__ import annotations

import boto3
import pytest
from botocore.exceptions import ClientError

from tests.integration.test_messages import (  # noqa: F401  (run again here, on the simulator)
    test_batch_delete_partial_failures,
    test_change_visibility,
    test_delayed_messages,
    test_priority_order,
    test_send_receive_delete,
    test_visibility_timeout_redelivers,
)
from tests.integration.test_queues import test_list_prefix_and_paging, test_recreate_does_not_see_old_messages  # noqa: F401
from tests.support.by_name import QueuesByName
from tests.support.recording import Recorder, RecordingClient
from tests.support.simulator.dynamodb import SimulatedDynamoDB


@pytest.fixture
def dynamodb(clock):
    """The simulator instead of moto, for the queue tests imported above."""
    return SimulatedDynamoDB(now=clock.now)


TABLE = "t"
KEYS = {
    "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
    "AttributeDefinitions": [
        {"AttributeName": "pk", "AttributeType": "S"},
        {"AttributeName": "sk", "AttributeType": "S"},
        {"AttributeName": "v", "AttributeType": "N"},
    ],
    "GlobalSecondaryIndexes": [
        {
            "IndexName": "ready",
            "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "v", "KeyType": "RANGE"}],
            "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["r", "x"]},
        }
    ],
    "BillingMode": "PAY_PER_REQUEST",
}


def item(n: int, pk: str = "q", body: str = "") -> dict:
    out = {"pk": {"S": pk}, "sk": {"S": f"L{n:04d}"}, "v": {"N": str(1000 + n)}, "r": {"N": "0"}, "x": {"N": "99"}}
    if body:
        out["b"] = {"S": body}
    return out


def outcome(call, **kwargs):
    """A response without its metadata, or the error code (and the items DynamoDB attaches to it)."""
    try:
        response = call(**kwargs)
    except ClientError as exc:
        extra = {k: v for k, v in exc.response.items() if k in ("Item", "CancellationReasons")}
        for reason in extra.get("CancellationReasons", []):
            reason.pop("Message", None)
        return ("error", exc.response["Error"]["Code"], extra)
    return {
        k: v for k, v in response.items() if k not in ("ResponseMetadata", "ConsumedCapacity", "ItemCollectionMetrics")
    }


def all_pages(client, **kwargs) -> list[list[dict]]:
    pages, start = [], None
    while True:
        response = client.query(**kwargs, **({"ExclusiveStartKey": start} if start else {}))
        pages.append(response.get("Items", response.get("Count")))
        start = response.get("LastEvaluatedKey")
        if not start:
            return pages


def delete_if(client, sk: str, condition: str, version: str, **extra):
    """The outcome of deleting the message `sk` of queue q under `condition` on its version (`:ver`)."""
    return outcome(
        client.delete_item,
        TableName=TABLE,
        Key={"pk": {"S": "q"}, "sk": {"S": sk}},
        ConditionExpression=condition,
        ExpressionAttributeValues={":ver": {"N": version}},
        **extra,
    )


def scenario(client) -> list:
    """Writes, conditions, updates and queries a message store makes; what each answered."""
    client.create_table(TableName=TABLE, **KEYS)
    seen: list = []
    for n in range(30):
        client.put_item(TableName=TABLE, Item=item(n, body="x" * (50 * n)))
    client.put_item(TableName=TABLE, Item=item(0, pk="other"))
    key = {"pk": {"S": "q"}, "sk": {"S": "L0003"}}
    seen.append(
        outcome(
            client.put_item,
            TableName=TABLE,
            Item=item(3),
            ConditionExpression="attribute_not_exists(pk)",
            ReturnValuesOnConditionCheckFailure="ALL_OLD",
        )
    )
    claim = {
        "TableName": TABLE,
        "Key": key,
        "UpdateExpression": "SET v = :vis, r = :next, d = if_not_exists(d, :zero) + :one, f = if_not_exists(f, :now)",
        "ConditionExpression": "r = :ver AND v <= :now AND (x > :s OR attribute_not_exists(x))",
        "ExpressionAttributeValues": {
            ":vis": {"N": "5000"},
            ":next": {"N": "1"},
            ":zero": {"N": "0"},
            ":one": {"N": "1"},
            ":now": {"N": "2000"},
            ":ver": {"N": "0"},
            ":s": {"N": "1"},
        },
        "ReturnValues": "ALL_NEW",
    }
    seen.append(outcome(client.update_item, **claim))
    seen.append(outcome(client.update_item, **claim))  # the same claim again: the version moved on
    seen.append(
        outcome(
            client.update_item,
            TableName=TABLE,
            Key={"pk": {"S": "q"}, "sk": {"S": "L0024"}},
            UpdateExpression="REMOVE b ADD c :two SET #g = :g",
            ExpressionAttributeNames={"#g": "g"},
            ExpressionAttributeValues={":two": {"N": "2"}, ":g": {"S": "group"}},
            ReturnValues="ALL_OLD",
        )
    )
    seen.append(delete_if(client, "L0025", "NOT r <> :ver", "0", ReturnValues="ALL_OLD"))
    seen.append(delete_if(client, "L0006", "r = :ver", "7"))
    seen.append(outcome(client.get_item, TableName=TABLE, Key=key, ConsistentRead=True))
    seen.append(outcome(client.get_item, TableName=TABLE, Key={"pk": {"S": "q"}, "sk": {"S": "nope"}}))
    base = {"TableName": TABLE, "ExpressionAttributeValues": {":q": {"S": "q"}, ":a": {"S": "L0010"}}}
    for condition in ("sk < :a", "sk <= :a", "sk > :a", "sk >= :a", "sk = :a"):
        seen.append(all_pages(client, KeyConditionExpression=f"pk = :q AND {condition}", Limit=7, **base))
    seen.append(
        all_pages(
            client,
            TableName=TABLE,
            KeyConditionExpression="pk = :q AND sk BETWEEN :a AND :b",
            ExpressionAttributeValues={":q": {"S": "q"}, ":a": {"S": "L0002"}, ":b": {"S": "L0020"}},
            ScanIndexForward=False,
            Limit=4,
            ProjectionExpression="sk, v",
        )
    )
    seen.append(
        all_pages(
            client,
            TableName=TABLE,
            KeyConditionExpression="pk = :q AND begins_with(sk, :l)",
            FilterExpression="size(b) > :n",
            ExpressionAttributeValues={":q": {"S": "q"}, ":l": {"S": "L001"}, ":n": {"N": "600"}},
        )
    )
    seen.append(
        outcome(
            client.query,
            TableName=TABLE,
            KeyConditionExpression="pk = :q",
            ExpressionAttributeValues={":q": {"S": "q"}},
            Select="COUNT",
        )
    )
    seen.append(
        all_pages(
            client,
            TableName=TABLE,
            IndexName="ready",
            KeyConditionExpression="pk = :q AND v <= :now",
            ExpressionAttributeValues={":q": {"S": "q"}, ":now": {"N": "1020"}},
            Limit=6,
        )
    )
    seen.append(
        outcome(
            client.batch_get_item,
            RequestItems={TABLE: {"Keys": [key, {"pk": {"S": "q"}, "sk": {"S": "L0001"}}]}},
        )
    )
    return seen


def transactions(client) -> list:
    seen = [
        outcome(
            client.transact_write_items,
            TransactItems=[
                {"Put": {"TableName": TABLE, "Item": item(100), "ConditionExpression": "attribute_not_exists(pk)"}},
                {
                    "Update": {
                        "TableName": TABLE,
                        "Key": {"pk": {"S": "q"}, "sk": {"S": "L0007"}},
                        "UpdateExpression": "SET r = r + :one",
                        "ExpressionAttributeValues": {":one": {"N": "1"}},
                    }
                },
            ],
        )
    ]
    seen.append(
        outcome(
            client.transact_write_items,
            TransactItems=[
                {"Put": {"TableName": TABLE, "Item": item(101)}},
                {
                    "Delete": {
                        "TableName": TABLE,
                        "Key": {"pk": {"S": "q"}, "sk": {"S": "L0008"}},
                        "ConditionExpression": "r = :nine",
                        "ExpressionAttributeValues": {":nine": {"N": "9"}},
                    }
                },
            ],
        )
    )
    seen.append(outcome(client.get_item, TableName=TABLE, Key={"pk": {"S": "q"}, "sk": {"S": "L0101"}}))
    seen.append(outcome(client.get_item, TableName=TABLE, Key={"pk": {"S": "q"}, "sk": {"S": "L0007"}}))
    return seen


@pytest.fixture
def moto_client(aws_env):
    return boto3.client("dynamodb", region_name="us-east-1")


def test_the_double_answers_as_moto(moto_client):
    assert scenario(SimulatedDynamoDB()) == scenario(moto_client)


def test_transactions_commit_or_cancel_as_on_moto(moto_client):
    simulator = SimulatedDynamoDB()
    scenario(simulator)
    scenario(moto_client)
    got = transactions(simulator)
    assert got == transactions(moto_client)
    assert got[1][:2] == ("error", "TransactionCanceledException")
    assert [r["Code"] for r in got[1][2]["CancellationReasons"]] == ["None", "ConditionalCheckFailed"]


def test_the_double_bills_as_the_recording_client_over_moto(moto_client):
    recorder = Recorder()
    scenario(RecordingClient(moto_client, recorder))
    simulator = SimulatedDynamoDB(record_calls=True)
    scenario(simulator)
    moto_calls = [(c.op, c.wcu, c.index_wcu, c.rcu, c.failed_condition) for c in recorder.calls]
    simulated_calls = [
        (c.op, c.wcu, c.index_wcu, c.rcu, c.failed_condition) for c in simulator.usage.calls if c.op != "CreateTable"
    ]
    assert simulated_calls == moto_calls
    assert sum(c.wcu for c in recorder.calls) > 30 and any(c.failed_condition for c in recorder.calls)


def test_the_queue_engine_bills_the_same_on_both(moto_client, clock):
    """One service lifecycle (send, receive, delete, counts) on each; the same calls and units."""
    from local_runtime.tables import create_tables
    from mnsd.ground.settings import Settings
    from mnsd.model.inputs import MessageInput
    from mnsd.services import build_services

    def lifecycle(client) -> None:
        settings = Settings(credentials="1:K:S")
        create_tables(client, settings)
        queues = QueuesByName(build_services(settings, dynamodb=client, clock=clock))
        queues.create_queue("1", "q")
        queues.send("1", "q", [MessageInput(body="b" * 900 * n, delay_seconds=None, priority=8) for n in range(1, 5)])
        got = queues.receive("1", "q", 3, 0)
        queues.batch_delete("1", "q", [r.receipt_handle for r in got])
        queues.queue_counts(queues.get_queue("1", "q"))

    recorder = Recorder()
    lifecycle(RecordingClient(moto_client, recorder))
    simulator = SimulatedDynamoDB(now=clock.now, record_calls=True)
    lifecycle(simulator)
    keep = ("PutItem", "UpdateItem", "DeleteItem", "GetItem", "BatchGetItem", "BatchWriteItem", "Query")
    assert [(c.op, c.wcu, c.index_wcu, c.rcu) for c in simulator.usage.calls if c.op in keep] == [
        (c.op, c.wcu, c.index_wcu, c.rcu) for c in recorder.calls
    ]


# --- what moto does not model: index writes, per-partition load, throttling ---------------------------------


def test_index_writes_are_billed_as_dynamodb_documents():
    simulator = SimulatedDynamoDB(record_calls=True)
    simulator.create_table(TableName=TABLE, **KEYS)
    simulator.put_item(TableName=TABLE, Item=item(1, body="y" * 1500))  # 2 KB item, small index entry

    def update(expression: str, values: dict) -> tuple:
        simulator.update_item(
            TableName=TABLE,
            Key={"pk": {"S": "q"}, "sk": {"S": "L0001"}},
            UpdateExpression=expression,
            ExpressionAttributeValues=values,
        )
        call = simulator.usage.calls[-1]
        return call.wcu, call.index_wcu

    put = simulator.usage.calls[-1]
    assert (put.wcu, put.index_wcu) == (2, 1)  # the item, plus one index entry
    assert update("SET v = :v", {":v": {"N": "7"}}) == (2, 2)  # sort key moved: delete + put in the index
    assert update("SET r = :r", {":r": {"N": "1"}}) == (2, 1)  # a projected attribute: the entry rewritten
    assert update("SET b = :b", {":b": {"S": "z"}}) == (2, 0)  # not projected: no index write
    simulator.update_item(TableName=TABLE, Key={"pk": {"S": "q"}, "sk": {"S": "L0001"}}, UpdateExpression="REMOVE v")
    assert (simulator.usage.calls[-1].wcu, simulator.usage.calls[-1].index_wcu) == (1, 1)  # left the index: a delete
    with pytest.raises(ClientError) as failed:
        simulator.delete_item(
            TableName=TABLE,
            Key={"pk": {"S": "q"}, "sk": {"S": "L0001"}},
            ConditionExpression="r = :r",
            ExpressionAttributeValues={":r": {"N": "5"}},
        )
    assert failed.value.response["Error"]["Code"] == "ConditionalCheckFailedException"
    assert isinstance(failed.value, simulator.exceptions.ConditionalCheckFailedException)
    last = simulator.usage.calls[-1]
    assert (last.wcu, last.index_wcu, last.failed_condition) == (1, 0, True)
    partitions = {p for c in simulator.usage.calls for p in c.partitions}
    assert partitions == {(TABLE, "", "q"), (TABLE, "ready", "q")}


def test_a_query_stopped_by_its_limit_returns_a_last_evaluated_key_as_dynamodb_does():
    simulator = SimulatedDynamoDB()
    simulator.create_table(TableName=TABLE, **KEYS)
    for n in range(4):
        simulator.put_item(TableName=TABLE, Item=item(n))
    request = {
        "TableName": TABLE,
        "KeyConditionExpression": "pk = :q",
        "ExpressionAttributeValues": {":q": {"S": "q"}},
    }
    assert "LastEvaluatedKey" in simulator.query(**request, Limit=4)
    assert "LastEvaluatedKey" not in simulator.query(**request, Limit=5)


def test_unused_or_undefined_placeholders_are_refused():
    simulator = SimulatedDynamoDB()
    simulator.create_table(TableName=TABLE, **KEYS)
    for values in ({":a": {"N": "1"}, ":b": {"N": "2"}}, {}):
        with pytest.raises(ClientError) as refused:
            simulator.put_item(
                TableName=TABLE, Item=item(1), ConditionExpression="r = :a", ExpressionAttributeValues=values
            )
        assert refused.value.response["Error"]["Code"] == "ValidationException"


def test_a_partition_over_its_write_ceiling_is_throttled_until_the_next_second():
    now = [100.0]
    simulator = SimulatedDynamoDB(now=lambda: now[0], throttle=True)
    simulator.create_table(TableName=TABLE, **{**KEYS, "GlobalSecondaryIndexes": []})
    for n in range(1000):
        simulator.put_item(TableName=TABLE, Item=item(n))
    simulator.put_item(TableName=TABLE, Item=item(0, pk="other"))  # another partition is not affected
    with pytest.raises(ClientError) as throttled:
        simulator.put_item(TableName=TABLE, Item=item(1000))
    assert throttled.value.response["Error"]["Code"] == "ProvisionedThroughputExceededException"
    batch = simulator.batch_write_item(
        RequestItems={TABLE: [{"PutRequest": {"Item": item(1001)}}, {"PutRequest": {"Item": item(5, pk="other")}}]}
    )
    assert batch["UnprocessedItems"] == {TABLE: [{"PutRequest": {"Item": item(1001)}}]}
    now[0] += 1
    simulator.put_item(TableName=TABLE, Item=item(1000))
    assert simulator.usage.throttled == {"PutItem": 1, "BatchWriteItem": 1}
    assert simulator.usage.hottest(100)[0] == 1000


def test_an_index_range_takes_every_entry_of_an_equal_sort_value(moto_client):
    """Many leases share one visible-at millisecond (a batch sent at once): `v <= :now` must take them all."""

    def run(client) -> list:
        client.create_table(TableName=TABLE, **KEYS)
        for n in range(12):
            client.put_item(TableName=TABLE, Item={**item(n), "v": {"N": str(1000 + n // 5)}})
        return [
            all_pages(
                client,
                TableName=TABLE,
                IndexName="ready",
                KeyConditionExpression=f"pk = :q AND v {op} :now",
                ExpressionAttributeValues={":q": {"S": "q"}, ":now": {"N": "1001"}},
                Limit=3,
            )
            for op in ("<=", "<", ">", ">=")
        ]

    simulator = run(SimulatedDynamoDB())
    expected = run(moto_client)
    key = lambda pages: sorted(i["sk"]["S"] for page in pages for i in page)  # noqa: E731 (order within a v is free)
    assert [key(p) for p in simulator] == [key(p) for p in expected]
    assert [len(key(p)) for p in simulator] == [10, 5, 2, 7]
