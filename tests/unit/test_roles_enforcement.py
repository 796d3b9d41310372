"""The roles' enforcement (`local_runtime.roles`): IAM's evaluation of a role's statements, what each boto3 call is
authorized as, and the hook that refuses a call as AWS does."""

from __future__ import annotations

import boto3
import pytest
from botocore.exceptions import ClientError
from moto import mock_aws

from local_runtime.roles.calls import TASK_TOKENS, Place, UnmappedCall, requests_of
from local_runtime.roles.containers import GuardedStandIn
from local_runtime.roles.enforce import Guard, Undecidable
from local_runtime.roles.policy import Request, UnknownCondition, decide
from local_runtime.roles.template import Resolver, Role

TABLE = "arn:aws:dynamodb:us-east-1:123456789012:table/meta"
KEY = "arn:aws:kms:us-east-1:123456789012:key/k"
COUNTERS = {
    "Effect": "Allow",
    "Action": "dynamodb:UpdateItem",
    "Resource": TABLE,
    "Condition": {"ForAllValues:StringLike": {"dynamodb:LeadingKeys": ["rate#*"]}},
}


def allowed(statements: list[dict], request: Request) -> bool:
    return decide(statements, request).allowed


def test_a_leading_keys_condition_allows_only_its_keys() -> None:
    assert allowed([COUNTERS], Request("dynamodb:UpdateItem", TABLE, {"dynamodb:LeadingKeys": ("rate#a#1",)}))
    assert not allowed([COUNTERS], Request("dynamodb:UpdateItem", TABLE, {"dynamodb:LeadingKeys": ("a#queue",)}))
    assert not allowed([COUNTERS], Request("dynamodb:GetItem", TABLE, {"dynamodb:LeadingKeys": ("rate#a#1",)}))
    mixed = {"dynamodb:LeadingKeys": ("rate#a", "a#queue")}
    assert not allowed([COUNTERS], Request("dynamodb:UpdateItem", TABLE, mixed))  # every key must match


def test_actions_and_resources_match_with_wildcards_and_not_resource() -> None:
    index = {"Effect": "Allow", "Action": ["dynamodb:Query"], "Resource": [f"{TABLE}/index/*"]}
    assert allowed([index], Request("dynamodb:Query", f"{TABLE}/index/ready"))
    assert not allowed([index], Request("dynamodb:Query", TABLE))
    sms = {"Effect": "Allow", "Action": "sns:Publish", "NotResource": "arn:aws:sns:*:*:*"}
    assert allowed([sms], Request("sns:Publish", "*"))  # a phone number
    assert not allowed([sms], Request("sns:Publish", "arn:aws:sns:us-east-1:123456789012:topic"))


def test_an_explicit_deny_wins_over_an_allow() -> None:
    deny = {"Effect": "Deny", "Action": "dynamodb:*", "Resource": "*"}
    assert not allowed([{**COUNTERS, "Condition": {}}, deny], Request("dynamodb:UpdateItem", TABLE))


def test_an_unknown_condition_operator_fails_loudly() -> None:
    odd = {**COUNTERS, "Condition": {"NumericLessThan": {"aws:MultiFactorAuthAge": "3600"}}}
    with pytest.raises(UnknownCondition):
        decide([odd], Request("dynamodb:UpdateItem", TABLE))


def test_batches_and_transactions_are_authorized_item_by_item() -> None:
    place = Place()
    batch = {"RequestItems": {"meta": {"Keys": [{"pk": {"S": "a#account"}, "sk": {"S": "x"}}, {"pk": {"S": "q#G1"}}]}}}
    requests = requests_of(place, "dynamodb", "BatchGetItem", batch)
    assert [(r.action, r.context["dynamodb:LeadingKeys"]) for r in requests] == [
        ("dynamodb:BatchGetItem", ("a#account",)),
        ("dynamodb:BatchGetItem", ("q#G1",)),
    ]
    transaction = {
        "TransactItems": [
            {"ConditionCheck": {"TableName": "meta", "Key": {"pk": {"S": "a#queue"}}}},
            {"Put": {"TableName": "messages", "Item": {"pk": {"S": "q#3"}}}},
        ]
    }
    actions = [r.action for r in requests_of(place, "dynamodb", "TransactWriteItems", transaction)]
    assert actions == ["dynamodb:ConditionCheckItem", "dynamodb:PutItem"]


def test_an_index_query_is_authorized_on_the_index_with_its_partition_key() -> None:
    query = {
        "TableName": "messages",
        "IndexName": "ready",
        "KeyConditionExpression": "#p = :p AND v <= :now",
        "ExpressionAttributeNames": {"#p": "pk"},
        "ExpressionAttributeValues": {":p": {"S": "q#1"}, ":now": {"N": "1"}},
    }
    (request,) = requests_of(Place(), "dynamodb", "Query", query)
    assert request.resource == "arn:aws:dynamodb:us-east-1:123456789012:table/messages/index/ready"
    assert request.context == {"dynamodb:LeadingKeys": ("q#1",)}


def test_an_encrypted_resource_needs_its_key_through_the_service() -> None:
    queue = "arn:aws:sqs:us-east-1:123456789012:push"
    place = Place(keys={queue: KEY, TASK_TOKENS: KEY})
    url = "https://sqs.us-east-1.amazonaws.com/123456789012/push"
    sent = requests_of(place, "sqs", "SendMessageBatch", {"QueueUrl": url, "Entries": []})
    via = {"kms:ViaService": ("sqs.us-east-1.amazonaws.com",)}
    assert sent == [
        Request("sqs:SendMessage", queue),
        Request("kms:GenerateDataKey", KEY, via),
        Request("kms:Decrypt", KEY, via),
    ]
    answered = requests_of(place, "stepfunctions", "SendTaskSuccess", {"taskToken": "t", "output": "{}"})
    assert [r.action for r in answered] == ["states:SendTaskSuccess", "kms:GenerateDataKey"]


def test_a_prefix_listing_of_alarms_is_covered_only_by_a_pattern_of_the_whole_prefix() -> None:
    (listing,) = requests_of(Place(), "cloudwatch", "DescribeAlarms", {"AlarmNamePrefix": "Mns-queue-alarm/"})
    alarms = "arn:aws:cloudwatch:us-east-1:123456789012:alarm:"
    assert allowed([{"Effect": "Allow", "Action": "cloudwatch:DescribeAlarms", "Resource": alarms + "Mns-*"}], listing)
    other = {"Effect": "Allow", "Action": "cloudwatch:DescribeAlarms", "Resource": alarms + "Mns-queue-alarm/a"}
    assert not allowed([other], listing)


def test_an_unmapped_call_is_refused_to_decide() -> None:
    with pytest.raises(UnmappedCall):
        requests_of(Place(), "dynamodb", "DeleteTable", {"TableName": "meta"})


def test_intrinsics_resolve_to_the_local_resources_and_unknown_ones_to_nothing() -> None:
    resolver = Resolver({"AWS::Partition": "aws"}, {"Meta": {"Ref": "meta", "Arn": TABLE}})
    joined = {"Fn::Join": ["", [{"Fn::GetAtt": ["Meta", "Arn"]}, "/index/*"]]}
    assert resolver.resolve(joined) == f"{TABLE}/index/*"
    assert resolver.resolve({"Fn::Sub": "arn:${AWS::Partition}:x:${Meta}"}) == "arn:aws:x:meta"
    assert "unresolved" in resolver.resolve({"Ref": "Elsewhere"})


def test_a_call_its_role_refuses_fails_with_the_service_access_denied(aws_credentials, tmp_path) -> None:
    role = Role("Mns/Functions/Role-put_account/Resource", (COUNTERS,))
    guard = Guard("put_account", role, Place(), str(tmp_path / "log.jsonl"))
    with mock_aws():
        client = guard.attach(boto3.client("dynamodb", region_name="us-east-1"))
        with pytest.raises(ClientError) as refused:
            client.get_item(TableName="meta", Key={"pk": {"S": "a#account"}, "sk": {"S": "account"}})
        assert refused.value.response["Error"]["Code"] == "AccessDeniedException"
        assert "dynamodb:GetItem" in refused.value.response["Error"]["Message"]
        # Allowed: the call reaches the (missing) table, and moto answers as DynamoDB would.
        with pytest.raises(ClientError) as reached:
            client.update_item(TableName="meta", Key={"pk": {"S": "rate#a"}, "sk": {"S": "1"}})
        assert reached.value.response["Error"]["Code"] == "ResourceNotFoundException"
        with pytest.raises(Undecidable):
            client.delete_table(TableName="meta")


def test_a_stand_in_for_a_client_is_decided_as_a_client_is(tmp_path) -> None:
    """The local runtime's Lambda stand-in (moto's needs Docker): `invoke` is `lambda:InvokeFunction` on the function."""
    function = "arn:aws:lambda:us-east-1:123456789012:function:record"
    role = Role(
        "Mns/Functions/Role-fanout/Resource",
        ({"Effect": "Allow", "Action": "lambda:InvokeFunction", "Resource": function},),
    )
    invoked: list[str] = []

    class StandIn:
        def invoke(self, FunctionName: str, Payload: bytes = b"{}") -> dict:  # noqa: N803
            invoked.append(FunctionName)
            return {"StatusCode": 200}

    client = GuardedStandIn(Guard("fanout", role, Place(), str(tmp_path / "log.jsonl")), "lambda", StandIn())
    assert client.invoke(FunctionName="record")["StatusCode"] == 200
    with pytest.raises(ClientError) as refused:
        client.invoke(FunctionName="other")
    assert refused.value.response["Error"]["Code"] == "AccessDeniedException"
    assert invoked == ["record"]
