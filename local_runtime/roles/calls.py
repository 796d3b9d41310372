"""What IAM authorizes for one boto3 call: the actions, resource ARNs and condition keys AWS would check, as the
service authorization reference and each service's guide describe them. Batches and transactions are authorized
item by item (each item's table, action and partition key); a query of an index on the index's ARN.

A call on a resource encrypted under a customer-managed key also needs that key, through the service
(`kms:ViaService`): the actions each service's guide names for the operation (`KEY_ACTIONS`).

A call this module does not know raises `UnmappedCall`: an AWS call nobody mapped is refused, never let through.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from local_runtime.roles.policy import Request

PARTITION_KEY = "pk"  # every table's and the ready index's partition key (`mnsd.storage.dynamodb.items.layout`)
NO_RESOURCE = "*"  # the resource of an action that supports no resource-level permission


class UnmappedCall(Exception):
    """A boto3 call whose authorization this module does not describe: map it (below) before it may run."""


@dataclass(frozen=True)
class Place:
    """Where ARNs point: the partition, Region and account; `keys` maps a resource ARN encrypted under a
    customer-managed key to the key's ARN (`TASK_TOKENS` for the state machine whose task tokens are answered)."""

    region: str = "us-east-1"
    account: str = "123456789012"
    partition: str = "aws"
    keys: Mapping[str, str] = field(default_factory=dict)

    def arn(self, service: str, resource: str, region: str | None = None) -> str:
        return f"arn:{self.partition}:{service}:{self.region if region is None else region}:{self.account}:{resource}"

    def via(self, service: str) -> tuple[str, ...]:
        return (f"{service}.{self.region}.amazonaws.com",)


TASK_TOKENS = "states:task-token"

# The key actions each (service, operation) needs on an encrypted resource. DynamoDB decrypts the table key with the
# caller's permission on every data call; SQS producers generate data keys and consumers decrypt; Step Functions
# encrypts what an execution or a task answer carries; Secrets Manager decrypts on reads, generates on writes; S3
# (SSE-KMS) likewise.
KEY_ACTIONS: dict[str, dict[str, tuple[str, ...]]] = {
    "dynamodb": {"*": ("kms:Decrypt",)},
    "sqs": {
        "SendMessage": ("kms:GenerateDataKey", "kms:Decrypt"),
        "SendMessageBatch": ("kms:GenerateDataKey", "kms:Decrypt"),
        "ReceiveMessage": ("kms:Decrypt",),
    },
    "states": {
        "StartExecution": ("kms:GenerateDataKey",),
        "SendTaskSuccess": ("kms:GenerateDataKey",),
        "SendTaskFailure": ("kms:GenerateDataKey",),
        "SendTaskHeartbeat": ("kms:GenerateDataKey",),
    },
    "secretsmanager": {"GetSecretValue": ("kms:Decrypt",), "PutSecretValue": ("kms:GenerateDataKey",)},
    "s3": {"PutObject": ("kms:GenerateDataKey",), "GetObject": ("kms:Decrypt",)},
}


def _key_requests(place: Place, service: str, operation: str, resource: str) -> list[Request]:
    key = place.keys.get(resource)
    actions = KEY_ACTIONS.get(service, {})
    needed = actions.get(operation, actions.get("*", ()))
    if key is None or not needed:
        return []
    return [Request(action, key, {"kms:ViaService": place.via(service)}) for action in needed]


def _on(place: Place, service: str, operation: str, resource: str, **context: tuple[str, ...]) -> list[Request]:
    return [Request(f"{service}:{operation}", resource, context), *_key_requests(place, service, operation, resource)]


# --- DynamoDB -------------------------------------------------------------------------------------------------------


def table_arn(place: Place, table: str) -> str:
    return table if table.startswith("arn:") else place.arn("dynamodb", f"table/{table}")


def _leading(key: Mapping[str, Any] | None) -> dict[str, tuple[str, ...]]:
    if not key or PARTITION_KEY not in key:
        return {}
    value = key[PARTITION_KEY]
    return {"dynamodb:LeadingKeys": (str(next(iter(value.values())) if isinstance(value, dict) else value),)}


def _query_leading(params: Mapping[str, Any]) -> dict[str, tuple[str, ...]]:
    """The partition key a query names: the equality on `pk` in its key condition."""
    names = params.get("ExpressionAttributeNames", {})
    values = params.get("ExpressionAttributeValues", {})
    for name, placeholder in re.findall(r"([#\w]+)\s*=\s*(:\w+)", params.get("KeyConditionExpression", "")):
        if names.get(name, name) == PARTITION_KEY and placeholder in values:
            return _leading({PARTITION_KEY: values[placeholder]})
    return {}


def _item(place: Place, operation: str, table: str, key: Mapping[str, Any] | None) -> list[Request]:
    return _on(place, "dynamodb", operation, table_arn(place, table), **_leading(key))


TRANSACT_WRITES = {
    "ConditionCheck": "ConditionCheckItem",
    "Put": "PutItem",
    "Update": "UpdateItem",
    "Delete": "DeleteItem",
}


def _batch_get(place: Place, operation: str, params: Mapping[str, Any]) -> list[Request]:
    return [
        request
        for table, asked in params["RequestItems"].items()
        for key in asked["Keys"]
        for request in _item(place, operation, table, key)
    ]


def _batch_write(place: Place, operation: str, params: Mapping[str, Any]) -> list[Request]:
    def key(write: Mapping[str, Any]) -> Any:
        return write["PutRequest"]["Item"] if "PutRequest" in write else write["DeleteRequest"]["Key"]

    return [
        request
        for table, writes in params["RequestItems"].items()
        for write in writes
        for request in _item(place, operation, table, key(write))
    ]


def _transact_write(place: Place, operation: str, params: Mapping[str, Any]) -> list[Request]:
    requests = []
    for entry in params["TransactItems"]:
        ((kind, item),) = entry.items()
        key = item.get("Item") if kind == "Put" else item.get("Key")
        requests += _item(place, TRANSACT_WRITES[kind], item["TableName"], key)
    return requests


def _transact_get(place: Place, operation: str, params: Mapping[str, Any]) -> list[Request]:
    return [
        request
        for entry in params["TransactItems"]
        for request in _item(place, "GetItem", entry["Get"]["TableName"], entry["Get"]["Key"])
    ]


def _read(place: Place, operation: str, params: Mapping[str, Any]) -> list[Request]:
    """A Query or Scan: on the index's ARN when it names one; a query with the partition key it names."""
    arn = table_arn(place, params["TableName"])
    if params.get("IndexName"):
        arn = f"{arn}/index/{params['IndexName']}"
    context = _query_leading(params) if operation == "Query" else {}
    return _on(place, "dynamodb", operation, arn, **context)


def _table(place: Place, operation: str, params: Mapping[str, Any]) -> list[Request]:
    return [Request(f"dynamodb:{operation}", table_arn(place, params["TableName"]))]


def _export(place: Place, operation: str, params: Mapping[str, Any]) -> list[Request]:
    """An export reads the table (its key, through DynamoDB) and writes the bucket as the caller (its key, through
    S3): the export's objects below the prefix."""
    table, bucket = params["TableArn"], f"arn:{place.partition}:s3:::{params['S3Bucket']}"
    written = f"{bucket}/{params.get('S3Prefix', '')}/AWSDynamoDB/export"
    return [
        *_on(place, "dynamodb", operation, table),
        Request("s3:PutObject", written),
        *_key_requests(place, "s3", "PutObject", bucket),
    ]


DYNAMODB: dict[str, Callable[[Place, str, Mapping[str, Any]], list[Request]]] = {
    "GetItem": lambda place, op, params: _item(place, op, params["TableName"], params.get("Key")),
    "DeleteItem": lambda place, op, params: _item(place, op, params["TableName"], params.get("Key")),
    "UpdateItem": lambda place, op, params: _item(place, op, params["TableName"], params.get("Key")),
    "PutItem": lambda place, op, params: _item(place, op, params["TableName"], params.get("Item")),
    "Query": _read,
    "Scan": _read,
    "BatchGetItem": _batch_get,
    "BatchWriteItem": _batch_write,
    "TransactWriteItems": _transact_write,
    "TransactGetItems": _transact_get,
    "ExportTableToPointInTime": _export,
    "DescribeTable": _table,
}


def dynamodb(place: Place, operation: str, params: Mapping[str, Any]) -> list[Request]:
    if operation not in DYNAMODB:
        raise UnmappedCall(f"dynamodb {operation}")
    return DYNAMODB[operation](place, operation, params)


# --- SQS, Step Functions, Secrets Manager ---------------------------------------------------------------------------


def queue_arn(place: Place, url: str) -> str:
    account, name = url.rstrip("/").split("/")[-2:]
    region = re.search(r"sqs[.-]([a-z0-9-]+)\.", url)
    return f"arn:{place.partition}:sqs:{region.group(1) if region else place.region}:{account}:{name}"


SQS_ACTIONS = {
    "SendMessage": "SendMessage",
    "SendMessageBatch": "SendMessage",  # authorized as SendMessage
    "ReceiveMessage": "ReceiveMessage",
    "DeleteMessage": "DeleteMessage",
    "DeleteMessageBatch": "DeleteMessage",
    "ChangeMessageVisibility": "ChangeMessageVisibility",
    "ChangeMessageVisibilityBatch": "ChangeMessageVisibility",
    "GetQueueAttributes": "GetQueueAttributes",
}


def sqs(place: Place, operation: str, params: Mapping[str, Any]) -> list[Request]:
    if operation not in SQS_ACTIONS:
        raise UnmappedCall(f"sqs {operation}")
    arn = queue_arn(place, params["QueueUrl"])
    return [Request(f"sqs:{SQS_ACTIONS[operation]}", arn), *_key_requests(place, "sqs", operation, arn)]


def states(place: Place, operation: str, params: Mapping[str, Any]) -> list[Request]:
    if operation in ("StartExecution", "ListExecutions"):
        return _on(place, "states", operation, params["stateMachineArn"])
    if operation in ("SendTaskSuccess", "SendTaskFailure", "SendTaskHeartbeat"):
        # A task token names no resource (the service authorization reference lists none): "*".
        return [Request(f"states:{operation}", NO_RESOURCE), *_key_requests(place, "states", operation, TASK_TOKENS)]
    if operation in ("DescribeExecution", "StopExecution"):
        return _on(place, "states", operation, params["executionArn"])
    raise UnmappedCall(f"stepfunctions {operation}")


def secretsmanager(place: Place, operation: str, params: Mapping[str, Any]) -> list[Request]:
    if operation not in ("GetSecretValue", "PutSecretValue", "DescribeSecret"):
        raise UnmappedCall(f"secretsmanager {operation}")
    secret = params["SecretId"]
    if not secret.startswith("arn:"):
        secret = place.arn("secretsmanager", f"secret:{secret}")
    return _on(place, "secretsmanager", operation, secret)


# --- CloudWatch, mail and SMS, S3, Cloud Map, Lambda, EventBridge ---------------------------------------------------


def cloudwatch(place: Place, operation: str, params: Mapping[str, Any]) -> list[Request]:
    def alarm(name: str) -> str:
        return place.arn("cloudwatch", f"alarm:{name}")

    if operation == "GetMetricData":  # no resource type, no condition key
        return [Request("cloudwatch:GetMetricData", NO_RESOURCE)]
    if operation == "PutMetricData":
        return [Request("cloudwatch:PutMetricData", NO_RESOURCE, {"cloudwatch:namespace": (params["Namespace"],)})]
    if operation == "PutMetricAlarm":
        actions = tuple(params.get("AlarmActions", ())) + tuple(params.get("OKActions", ()))
        context = {"cloudwatch:AlarmActions": actions} if actions else {}
        return [Request("cloudwatch:PutMetricAlarm", alarm(params["AlarmName"]), context)]
    if operation == "DeleteAlarms":
        return [Request("cloudwatch:DeleteAlarms", alarm(name)) for name in params["AlarmNames"]]
    if operation == "DescribeAlarms":
        # The alarm resource type (the service authorization reference): the alarms named, or every alarm the
        # prefix may list (`alarm:{prefix}*`, which only a pattern covering the whole prefix matches).
        if params.get("AlarmNames"):
            return [Request("cloudwatch:DescribeAlarms", alarm(name)) for name in params["AlarmNames"]]
        return [Request("cloudwatch:DescribeAlarms", alarm(params.get("AlarmNamePrefix", "") + "*"))]
    raise UnmappedCall(f"cloudwatch {operation}")


def ses(place: Place, operation: str, params: Mapping[str, Any]) -> list[Request]:
    if operation != "SendEmail":
        raise UnmappedCall(f"ses {operation}")
    source = params["Source"].rpartition("<")[2].rstrip(">")
    return [Request("ses:SendEmail", params.get("SourceArn") or place.arn("ses", f"identity/{source}"))]


def sns(place: Place, operation: str, params: Mapping[str, Any]) -> list[Request]:
    if operation != "Publish":
        raise UnmappedCall(f"sns {operation}")
    # A publish to a phone number names no resource.
    return [Request("sns:Publish", params.get("TopicArn") or params.get("TargetArn") or NO_RESOURCE)]


def s3(place: Place, operation: str, params: Mapping[str, Any]) -> list[Request]:
    bucket = f"arn:{place.partition}:s3:::{params['Bucket']}"
    if operation in ("ListObjectsV2", "ListObjects"):
        return [Request("s3:ListBucket", bucket, {"s3:prefix": (params.get("Prefix", ""),)})]
    if operation in ("GetObject", "PutObject", "DeleteObject", "HeadObject"):
        action = "GetObject" if operation == "HeadObject" else operation
        arn = f"{bucket}/{params['Key']}"
        return [Request(f"s3:{action}", arn), *_key_requests(place, "s3", action, bucket)]
    raise UnmappedCall(f"s3 {operation}")


def servicediscovery(place: Place, operation: str, params: Mapping[str, Any]) -> list[Request]:
    if operation != "DiscoverInstances":
        raise UnmappedCall(f"servicediscovery {operation}")
    return [Request("servicediscovery:DiscoverInstances", NO_RESOURCE)]  # no resource-level permission


def lambda_(place: Place, operation: str, params: Mapping[str, Any]) -> list[Request]:
    if operation != "Invoke":
        raise UnmappedCall(f"lambda {operation}")
    name = params["FunctionName"]
    return [
        Request("lambda:InvokeFunction", name if name.startswith("arn:") else place.arn("lambda", f"function:{name}"))
    ]


def events(place: Place, operation: str, params: Mapping[str, Any]) -> list[Request]:
    if operation != "PutEvents":
        raise UnmappedCall(f"events {operation}")
    buses = {entry.get("EventBusName") or "default" for entry in params["Entries"]}
    return [
        Request("events:PutEvents", bus if bus.startswith("arn:") else place.arn("events", f"event-bus/{bus}"))
        for bus in sorted(buses)
    ]


MAPPERS: dict[str, Callable[[Place, str, Mapping[str, Any]], list[Request]]] = {
    "dynamodb": dynamodb,
    "sqs": sqs,
    "stepfunctions": states,
    "secretsmanager": secretsmanager,
    "cloudwatch": cloudwatch,
    "ses": ses,
    "sns": sns,
    "s3": s3,
    "servicediscovery": servicediscovery,
    "lambda": lambda_,
    "events": events,
}


def requests_of(place: Place, service: str, operation: str, params: Mapping[str, Any]) -> list[Request]:
    """Every authorization AWS makes for the call `operation` of the boto3 client `service` with `params`."""
    mapper = MAPPERS.get(service)
    if mapper is None:
        raise UnmappedCall(f"{service} {operation}")
    return mapper(place, operation, params)
