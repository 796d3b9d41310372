"""Encryption at rest under the company's own KMS key, when one is given; AWS-owned and AWS-managed keys otherwise.

Context: `kmsKeyArn` (a symmetric key of the stack's account and Region, whose policy the company keeps: README,
"Customer-managed key") or `createKmsKey=true` (the stack makes one, rotated yearly, kept when the stack goes, with
the key policy the services need). With either, the key encrypts every table (and its streams), secret, queue,
topic, log group, the data bucket, the retry state machine and the Glue jobs' S3 output, logs and bookmarks.

The key is set on the CloudFormation resources themselves, not through the L2 constructs' key properties: those
add grants with wildcard actions (`kms:ReEncrypt*`, `kms:GenerateDataKey*`) to every grantee. Each role that
reads or writes encrypted data gets exactly `KEY_USE_ACTIONS` on this key, through those services only.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from aws_cdk import ArnFormat, Aws, CfnResource, RemovalPolicy, Stack
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_secretsmanager as secretsmanager
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sqs as sqs
from aws_cdk import aws_stepfunctions as sfn
from constructs import Construct

from infra.capacity import flag

# What a role needs to read and write data the key encrypts (the data key of each item, message or object).
KEY_USE_ACTIONS = ("kms:Decrypt", "kms:Encrypt", "kms:GenerateDataKey")
# The services that call KMS on the functions' behalf: tables and streams, secrets, queues, executions, objects.
KEY_USE_SERVICES = ("dynamodb", "secretsmanager", "sqs", "states", "s3")
# CloudWatch Logs encrypts log groups with the key itself (AWS documents Encrypt*, Decrypt*, ReEncrypt*,
# GenerateDataKey*, Describe*; the symmetric-key actions those patterns match, spelled out).
LOGS_KEY_ACTIONS = (
    "kms:Encrypt",
    "kms:Decrypt",
    "kms:ReEncryptFrom",
    "kms:ReEncryptTo",
    "kms:GenerateDataKey",
    "kms:GenerateDataKeyWithoutPlaintext",
    "kms:DescribeKey",
)
# Alarms (CloudWatch) and the Glue failure rule (EventBridge) publish to the encrypted alarm topic.
TOPIC_PUBLISHERS = ("cloudwatch.amazonaws.com", "events.amazonaws.com")
TOPIC_PUBLISHER_ACTIONS = ("kms:Decrypt", "kms:GenerateDataKey")
# Step Functions' log delivery reads the encrypted execution data it writes to the log group.
LOG_DELIVERY = "delivery.logs.amazonaws.com"
# How long Step Functions reuses a data key (the default): fewer KMS calls per execution.
STATES_DATA_KEY_REUSE_SECONDS = 300


def via_services(services: tuple[str, ...] = KEY_USE_SERVICES) -> list[str]:
    """`kms:ViaService` values of `services` in the stack's Region and partition (amazonaws.com.cn in China)."""
    return [f"{service}.{Aws.REGION}.{Aws.URL_SUFFIX}" for service in services]


class Encryption:
    """`key` is the customer-managed key, or None (the services' own keys). The `encrypt_*` methods set it on a
    resource and do nothing without it; `grant_use` gives a role what it needs to use encrypted data."""

    def __init__(self, key: kms.IKey | None = None) -> None:
        self.key = key

    @classmethod
    def from_context(cls, scope: Construct, context: Callable[[str], object]) -> Encryption:
        """From the context keys `kmsKeyArn` (imported as `KmsKey` of `scope`) and `createKmsKey` (made as `KmsKey`)."""
        key_arn = context("kmsKeyArn")
        create = context("createKmsKey")
        create_key = create is not None and flag(create)
        if key_arn and create_key:
            raise ValueError("give kmsKeyArn or createKmsKey, not both")
        if key_arn:
            return cls(kms.Key.from_key_arn(scope, "KmsKey", str(key_arn)))
        return cls(created_key(scope, "KmsKey") if create_key else None)

    def grant_use(self, grantee: iam.IGrantable, *, services: tuple[str, ...] | None = KEY_USE_SERVICES) -> None:
        """`grantee` may encrypt and decrypt with the key, only through `services` (any, when None)."""
        if self.key is None:
            return
        conditions = {"StringEquals": {"kms:ViaService": via_services(services)}} if services else None
        grantee.grant_principal.add_to_principal_policy(
            iam.PolicyStatement(actions=list(KEY_USE_ACTIONS), resources=[self.key.key_arn], conditions=conditions)
        )

    def encrypt_table(self, table: dynamodb.Table) -> None:
        if self.key is None:
            return
        _resource(table, dynamodb.CfnTable).sse_specification = dynamodb.CfnTable.SSESpecificationProperty(
            sse_enabled=True, sse_type="KMS", kms_master_key_id=self.key.key_arn
        )

    def encrypt_secret(self, secret: secretsmanager.Secret) -> None:
        if self.key is not None:
            _resource(secret, secretsmanager.CfnSecret).kms_key_id = self.key.key_arn

    def encrypt_topic(self, topic: sns.Topic) -> None:
        if self.key is not None:
            _resource(topic, sns.CfnTopic).kms_master_key_id = self.key.key_arn

    def queue_encryption(self) -> sqs.QueueEncryption | None:
        """The `encryption` of a new queue: SQS-managed without the key; with it, set by `encrypt_queue`."""
        return None if self.key else sqs.QueueEncryption.SQS_MANAGED

    def encrypt_queue(self, queue: sqs.Queue) -> None:
        if self.key is not None:
            _resource(queue, sqs.CfnQueue).kms_master_key_id = self.key.key_arn

    def encrypt_state_machine(self, state_machine: sfn.StateMachine) -> None:
        """The executions' input, output and history (push bodies) under the key; the machine's role may use it."""
        if self.key is None:
            return
        _resource(
            state_machine, sfn.CfnStateMachine
        ).encryption_configuration = sfn.CfnStateMachine.EncryptionConfigurationProperty(
            type="CUSTOMER_MANAGED_KMS_KEY",
            kms_key_id=self.key.key_arn,
            kms_data_key_reuse_period_seconds=STATES_DATA_KEY_REUSE_SECONDS,
        )
        # Through Step Functions (its own data), SQS (the tasks it sends) and the log delivery of its executions.
        self.grant_use(state_machine, services=("states", "sqs", "logs"))

    def bucket_encryption(self) -> dict[str, object]:
        """The encryption keywords of an `s3.Bucket` holding data: SSE-KMS under the key (with an S3 bucket key,
        one KMS call per object batch instead of per object), SSE-S3 without it."""
        if self.key is None:
            return {"encryption": s3.BucketEncryption.S3_MANAGED}
        return {"encryption": s3.BucketEncryption.KMS, "encryption_key": self.key, "bucket_key_enabled": True}


def created_key(scope: Construct, id: str) -> kms.Key:
    """A key of the stack's own, rotated yearly, whose policy lets the services that encrypt with it do so."""
    stack = Stack.of(scope)
    key = kms.Key(
        scope,
        id,
        description=f"Encrypts the data of the MNS stack {stack.stack_name}",
        enable_key_rotation=True,
        removal_policy=RemovalPolicy.RETAIN,  # data encrypted under it may outlive the stack (buckets, backups)
    )
    log_groups = stack.format_arn(
        service="logs", resource="log-group", resource_name="*", arn_format=ArnFormat.COLON_RESOURCE_NAME
    )
    key.add_to_resource_policy(
        iam.PolicyStatement(
            sid="CloudWatchLogsEncryptsTheLogGroupsOfThisAccountAndRegion",
            principals=[iam.ServicePrincipal(f"logs.{Aws.REGION}.{Aws.URL_SUFFIX}")],
            actions=list(LOGS_KEY_ACTIONS),
            resources=["*"],
            conditions={"ArnLike": {"kms:EncryptionContext:aws:logs:arn": log_groups}},
        )
    )
    key.add_to_resource_policy(
        iam.PolicyStatement(
            sid="AlarmsAndEventRulesPublishToTheEncryptedAlarmTopic",
            principals=[iam.ServicePrincipal(service) for service in TOPIC_PUBLISHERS],
            actions=list(TOPIC_PUBLISHER_ACTIONS),
            resources=["*"],
        )
    )
    key.add_to_resource_policy(
        iam.PolicyStatement(
            sid="StepFunctionsLogDeliveryReadsEncryptedExecutionData",
            principals=[iam.ServicePrincipal(LOG_DELIVERY)],
            actions=["kms:Decrypt"],
            resources=["*"],
        )
    )
    return key


T = TypeVar("T", bound=CfnResource)


def _resource(construct: Construct, kind: type[T]) -> T:
    """The CloudFormation resource of an L2 construct."""
    resource = construct.node.default_child
    if not isinstance(resource, kind):
        raise TypeError(f"{construct.node.path} is not backed by a {kind.__name__}")
    return resource
