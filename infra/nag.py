"""The stack as `app.py` deploys it (`build`), checked by cdk-nag's AwsSolutions rules: the findings reviewed and
accepted, each with its reason. Everything else must pass.

Each finding is acknowledged on the narrowest construct it applies to (and everything below it).
"""

from __future__ import annotations

from aws_cdk import Acknowledgment, App, Stack, Token, Validations
from aws_cdk import aws_iam as iam
from cdk_nag import AwsSolutionsChecks
from constructs import IConstruct

from infra.stack import MnsStack


def build(app: App, id: str = "Mns", **kwargs: object) -> MnsStack:
    """The stack as `app.py` deploys it, its reviewed findings acknowledged, checked by cdk-nag's AwsSolutions
    rules."""
    stack = MnsStack(app, id, **kwargs)
    acknowledge_reviewed_findings(stack)
    Validations.of(app).add_plugins(AwsSolutionsChecks(app))
    return stack


def arn(stack: Stack, service: str, resource: str) -> str:
    """An ARN of `stack`'s account and Region as cdk-nag names it in a finding."""
    region = "<AWS::Region>" if Token.is_unresolved(stack.region) else stack.region
    account = "<AWS::AccountId>" if Token.is_unresolved(stack.account) else stack.account
    return f"arn:<AWS::Partition>:{service}:{region}:{account}:{resource}"


def reviewed(stack: MnsStack) -> list[tuple[IConstruct, str, str]]:
    """(construct, rule, reason) of every accepted finding."""

    def role(name: str) -> iam.IRole:
        found = stack.functions.functions[name].role
        assert found is not None, name
        return found

    data = "<{}.Arn>".format(stack.resolve(stack.buckets.data.bucket_arn)["Fn::GetAtt"][0])
    messages = "<{}.Arn>".format(stack.resolve(stack.tables.messages.table_arn)["Fn::GetAtt"][0])
    log = "<{}.Arn>".format(stack.resolve(stack.tables.log.table_arn)["Fn::GetAtt"][0])
    return [
        (
            stack.functions,
            f"AwsSolutions-IAM5[Resource::{messages}/index/*]",
            "The message table's indexes (its ready index, which receives query): CDK's table grants name "
            "them by this pattern; the table has no other index.",
        ),
        (
            stack.functions,
            f"AwsSolutions-IAM5[Resource::{log}/index/*]",
            "The log table's indexes (its index of one message's records, which a message's history queries): "
            "CDK's table grants name them by this pattern; the table has no other index.",
        ),
        (
            stack.api,
            "AwsSolutions-APIG4",
            "MNS clients authenticate with MNS request signatures (Authorization: MNS keyid:signature, or V4: "
            "MNS4-HMAC-SHA256 Credential=...,Signature=...), which "
            "the route functions verify; API Gateway has no authorizer for that scheme, and an authorizer's "
            "refusal would reach clients in a non-MNS shape.",
        ),
        (
            stack.functions,
            "AwsSolutions-IAM5[Resource::*]",
            "Only xray:PutTraceSegments and xray:PutTelemetryRecords (active tracing), dynamodb:ListStreams "
            "(stream event sources), for the push worker, states:SendTaskSuccess/Failure/Heartbeat (answers "
            "to task tokens) and, for get_queue, cloudwatch:GetMetricData (the console's minute chart), which "
            "support no resource-level permissions; every other statement names its "
            "table, stream, queue, state machine, secret or log group.",
        ),
        (
            stack.functions,
            "AwsSolutions-L1",
            "Python 3.13 (Amazon Linux 2023, supported until 2029) rather than the newest runtime: the layer's "
            "pinned wheels and the Powertools layer are built and tested for it; a new runtime is adopted after "
            "they are (infra/layer.py, RUNTIME).",
        ),
        (
            stack.secrets,
            "AwsSolutions-SMG4",
            "Access keys are rotated by the admin command (create a new key, then revoke the old one); the receipt "
            "key is not rotated automatically because that would invalidate every outstanding receipt handle.",
        ),
        (
            stack.signing_key,
            "AwsSolutions-SMG4",
            "The push signing key is paired with the certificate HTTP endpoints fetch and may cache; a new key "
            "comes with a new secret (replacing the SigningKey construct), never behind the endpoints' back.",
        ),
        (
            stack.push.state_machine,
            "AwsSolutions-IAM5[Resource::*]",
            "X-Ray tracing and CloudWatch Logs delivery actions of Step Functions, which support no "
            "resource-level permissions (CDK's own grants for tracing_enabled and logs).",
        ),
        *(
            (
                role(name),
                f"AwsSolutions-IAM5[Resource::{arn(stack, 'ses', 'identity/*')}]",
                "Mail endpoints send through any SES identity of this account and Region: which sender a message "
                "uses is the publisher's choice (DirectMail AccountName), verified in SES.",
            )
            for name in ("fanout", "first_attempt", "push_worker")
        ),
        *(
            (
                role(name),
                f"AwsSolutions-IAM5[Resource::{pattern}]",
                "A pattern the operator listed in pushLambdaArns or pushEventBusArns (the functions or buses "
                "subscriptions may push to, e.g. a function's versions and aliases): granted as given, to invoke or "
                "put events only.",
            )
            for name in ("fanout", "first_attempt", "push_worker")
            for pattern in stack.push.targets.patterns()
        ),
        (
            role("sample_metrics"),
            f"AwsSolutions-IAM5[Resource::{arn(stack, 'cloudwatch', f'alarm:{stack.sampler.prefix}*')}]",
            "The alarms queues ask for (their Alarms attribute) are made at run time, one per queue and kind: the "
            "sampler may create, read and delete the alarms of the stack's name prefix only, notifying SNS topics only.",
        ),
        (
            role("export_tables"),
            f"AwsSolutions-IAM5[Resource::{data}/exports/*]",
            "DynamoDB writes an export as the caller, under object keys of its own below the export prefix.",
        ),
        *(
            (stack.analytics.role, f"AwsSolutions-IAM5[Resource::{resource}]", reason)
            for resource, reason in (
                (f"{data}/exports/*", "The jobs read the exports, whose keys DynamoDB chooses (export ids)."),
                (f"{data}/analytics/*", "The jobs write their tables, one key per partition and file."),
                (
                    arn(stack, "glue", "table/mns_analytics/*"),
                    "The jobs create and update the tables of their own database only.",
                ),
                *(
                    (
                        arn(stack, "glue", f"userDefinedFunction/{database}/*"),
                        "Spark's catalog client lists the functions of the databases it opens (read only): "
                        "the default database at session start and the jobs' own.",
                    )
                    for database in ("default", "mns_analytics")
                ),
            )
        ),
        (
            stack.push.fanout_failures,
            "AwsSolutions-SQS3",
            "This queue is itself a dead-letter destination: the fan-out event source's on-failure destination "
            "(descriptions of stream batches that failed every retry), alarmed and kept 14 days.",
        ),
        (
            stack.analytics,
            "AwsSolutions-GL1",
            "Without a customer-managed key (kmsKeyArn / createKmsKey) the jobs' CloudWatch logs are encrypted at "
            "rest by CloudWatch Logs and carry job progress and aggregate counts only, never message bodies; with "
            "the key the jobs run under a security configuration that encrypts them with it.",
        ),
        (
            stack.analytics,
            "AwsSolutions-GL3",
            "The jobs use no job bookmarks (each run reads the newest full export), so there is nothing to encrypt "
            "(with a customer-managed key, the security configuration encrypts bookmarks with it all the same).",
        ),
    ]


def untraced(stack: MnsStack) -> list[tuple[IConstruct, str, str]]:
    """Without `-c tracing=active` nothing is traced (`infra.observability`): the push retry workflow neither."""
    if stack.functions.log_settings.tracing:
        return []
    reason = (
        "X-Ray traces are a choice of the operator (-c tracing=active, infra/observability.py): at $5 per million "
        "traces they cost a busy estate more than its writes; the workflow's executions are logged (level ALL) and "
        "their history kept by Step Functions."
    )
    return [(stack.push.state_machine, "AwsSolutions-SF2", reason)]


def acknowledge_reviewed_findings(stack: MnsStack) -> None:
    tier = stack.wait_tier.reviewed() if stack.wait_tier is not None else []
    front = stack.load_balancer.reviewed() if stack.load_balancer is not None else []
    snapshots = stack.backlog_snapshots.reviewed() if stack.backlog_snapshots is not None else []
    for construct, rule, reason in [*reviewed(stack), *tier, *front, *snapshots, *untraced(stack)]:
        Validations.of(construct).acknowledge(Acknowledgment(id=rule, reason=reason))
