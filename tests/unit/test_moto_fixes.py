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


def test_a_transaction_backs_up_its_table_once_and_a_refused_one_still_changes_nothing(aws_credentials):
    import boto3
    from moto import mock_aws
    from moto.dynamodb.models.table import Table

    moto_fixes.apply()
    with mock_aws():
        client = boto3.client("dynamodb", region_name="us-east-1")
        client.create_table(
            TableName="t",
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
            BillingMode="PAY_PER_REQUEST",
        )
        copies: list[object] = []
        deepcopy_once = Table.__deepcopy__

        def counted(self, memo):
            copies.append(deepcopy_once(self, memo))
            return copies[-1]

        Table.__deepcopy__ = counted
        try:
            puts = [{"Put": {"TableName": "t", "Item": {"pk": {"S": f"k{i}"}}}} for i in range(16)]
            client.transact_write_items(TransactItems=puts)
            assert len(copies) == 16 and len({id(c) for c in copies}) == 1  # asked once per item, made once
            refused = [
                {"Delete": {"TableName": "t", "Key": {"pk": {"S": "k0"}}}},
                {
                    "Put": {
                        "TableName": "t",
                        "Item": {"pk": {"S": "k1"}},
                        "ConditionExpression": "attribute_not_exists(pk)",
                    }
                },
            ]
            with pytest.raises(client.exceptions.TransactionCanceledException):
                client.transact_write_items(TransactItems=refused)
        finally:
            Table.__deepcopy__ = deepcopy_once
        assert len(client.scan(TableName="t")["Items"]) == 16  # the delete before the refusal rolled back
