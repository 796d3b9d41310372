"""Where the local runtime makes moto's Step Functions behave as AWS does for the push workflow."""

import pytest
from moto.stepfunctions.parser.asl.eval.callback.callback import (
    CallbackConsumerLeft,
    CallbackNotifyConsumerError,
    CallbackPoolManager,
)

from local_runtime import moto_fixes


def test_a_token_accepts_heartbeats_as_soon_as_it_is_issued():
    """The push worker may heartbeat a retry's token before the Task has started its heartbeat clock (it sends
    the SQS message first): a refusal would make the worker skip a live retry."""
    moto_fixes.apply()
    pool = CallbackPoolManager(activity_store={})
    endpoint = pool.add("token")
    assert pool.heartbeat("token")  # before the Task set up its heartbeat endpoint
    heartbeat = endpoint.setup_heartbeat_endpoint(heartbeat_seconds=60)
    assert pool.heartbeat("token") and heartbeat._next_heartbeat_event.is_set()
    assert not pool.heartbeat("unknown")  # never issued: InvalidToken
    endpoint.report(CallbackConsumerLeft())
    with pytest.raises(CallbackNotifyConsumerError):  # the Task ended: refused
        pool.heartbeat("token")


def _table(client, name: str, range_key: bool) -> None:
    keys = [("pk", "HASH"), ("sk", "RANGE")] if range_key else [("pk", "HASH")]
    client.create_table(
        TableName=name,
        KeySchema=[{"AttributeName": a, "KeyType": k} for a, k in keys],
        AttributeDefinitions=[{"AttributeName": a, "AttributeType": "S"} for a, _ in keys],
        BillingMode="PAY_PER_REQUEST",
        StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"},
    )


def test_a_transaction_copies_no_table_and_a_refused_one_still_changes_nothing(aws_credentials):
    import boto3
    from moto import mock_aws
    from moto.dynamodb.models import dynamodb_backends
    from moto.dynamodb.models.table import Table

    moto_fixes.apply()
    with mock_aws():
        client = boto3.client("dynamodb", region_name="us-east-1")
        _table(client, "t", range_key=True)
        _table(client, "h", range_key=False)
        tables = dynamodb_backends["123456789012"]["us-east-1"].tables
        copied: list[bool] = []
        as_it_is = Table.__deepcopy__

        def counted(self, memo):
            backup = as_it_is(self, memo)
            copied.append(backup is not self)
            return backup

        Table.__deepcopy__ = counted
        try:
            puts = [
                {"Put": {"TableName": "t", "Item": {"pk": {"S": f"p{i % 4}"}, "sk": {"S": f"s{i}"}}}} for i in range(16)
            ]
            client.transact_write_items(TransactItems=[*puts, {"Put": {"TableName": "h", "Item": {"pk": {"S": "k"}}}}])
            assert len(copied) == 17 and not any(copied)  # asked once per item, no table copied
            before = {name: client.scan(TableName=name)["Items"] for name in ("t", "h")}
            streams = {name: len(tables[name].stream_shard.items) for name in ("t", "h")}
            partitions = {name: set(tables[name].items) for name in ("t", "h")}
            refused = [
                {"Delete": {"TableName": "t", "Key": {"pk": {"S": "p0"}, "sk": {"S": "s0"}}}},
                {
                    "Update": {
                        "TableName": "t",
                        "Key": {"pk": {"S": "p1"}, "sk": {"S": "s1"}},
                        "UpdateExpression": "SET v = :v",
                        "ExpressionAttributeValues": {":v": {"N": "7"}},
                    }
                },
                {"Put": {"TableName": "t", "Item": {"pk": {"S": "new"}, "sk": {"S": "s"}}}},  # a partition of its own
                {"Put": {"TableName": "h", "Item": {"pk": {"S": "k"}, "v": {"S": "changed"}}}},
                {"Delete": {"TableName": "h", "Key": {"pk": {"S": "absent"}}}},
                {
                    "ConditionCheck": {
                        "TableName": "t",
                        "Key": {"pk": {"S": "p2"}, "sk": {"S": "s2"}},
                        "ConditionExpression": "attribute_not_exists(pk)",
                    }
                },
            ]
            with pytest.raises(client.exceptions.TransactionCanceledException):
                client.transact_write_items(TransactItems=refused)
            assert not any(copied)
        finally:
            Table.__deepcopy__ = as_it_is
        # Every item as it was (the deleted back, the updated unchanged, the created gone), no stream record of the
        # refused writes, no partition left open.
        assert {name: client.scan(TableName=name)["Items"] for name in ("t", "h")} == before
        assert {name: len(tables[name].stream_shard.items) for name in ("t", "h")} == streams
        assert {name: set(tables[name].items) for name in ("t", "h")} == partitions
        client.transact_write_items(TransactItems=refused[:5])  # the same writes, unrefused, are applied
        assert "p0" not in {i["pk"]["S"] for i in client.scan(TableName="t")["Items"] if i["sk"]["S"] == "s0"}
        assert client.get_item(TableName="h", Key={"pk": {"S": "k"}})["Item"]["v"] == {"S": "changed"}
        assert len(tables["t"].stream_shard.items) == streams["t"] + 3


def test_a_transaction_sent_again_with_its_token_is_applied_once_until_the_token_is_forgotten(
    aws_credentials, monkeypatch
):
    import boto3
    from moto import mock_aws

    moto_fixes.apply()
    now = [1_000_000.0]
    monkeypatch.setattr(moto_fixes.time, "monotonic", lambda: now[0])
    with mock_aws():
        client = boto3.client("dynamodb", region_name="us-east-1")
        _table(client, "t", range_key=False)

        def add(token: str) -> None:
            update = {"TableName": "t", "Key": {"pk": {"S": "k"}}, "UpdateExpression": "ADD n :one"}
            update["ExpressionAttributeValues"] = {":one": {"N": "1"}}
            client.transact_write_items(TransactItems=[{"Update": update}], ClientRequestToken=token)

        def count() -> int:
            return int(client.get_item(TableName="t", Key={"pk": {"S": "k"}})["Item"]["n"]["N"])

        add("first")
        now[0] += moto_fixes.IDEMPOTENCY_SECONDS / 2
        add("second")
        add("first")  # within its time: answered as before, not applied again
        assert count() == 2
        now[0] += moto_fixes.IDEMPOTENCY_SECONDS / 2 + 1  # the first token past its time, the second not
        add("second")
        assert count() == 2
        add("first")  # forgotten: a new transaction
        assert count() == 3
