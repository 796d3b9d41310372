"""Analytics: the operation log, the scheduled table exports and the Glue 5.1 jobs over them.

    message table stream --(leases of LoggingEnabled queues only)--> oplog function --> log table
    02:00 UTC: export_tables function --ExportTableToPointInTime--> s3://<data>/exports/log/
               snapshot_backlog function --every queue's counts--> s3://<data>/exports/backlog/<ms>.json.gz
    03:00 UTC: Glue trigger --> the four jobs of `glue_jobs/` --> s3://<data>/analytics/<job>/ + Data Catalog

With `-c backlogSnapshot=export` the backlog snapshot is counted from full exports of the message and meta tables
instead (exact, at one instant; the message table's export costs a share of every message: docs/analytics.md).

Topic events (publish, push, drop) are written to the log by the delivery functions themselves.
Contract of the jobs: docs/analytics.md.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

from aws_cdk import ArnFormat, Duration, RemovalPolicy, Stack
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_glue as glue
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_lambda_event_sources as sources
from aws_cdk import aws_logs as logs
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_s3_assets as assets
from aws_cdk import aws_sns as sns
from constructs import Construct, IConstruct

from functions.export_tables import EXPORT_BUCKET, EXPORT_TABLES
from infra.encryption import Encryption
from infra.functions import LOG_RETENTION, Functions
from infra.storage import ANALYTICS_PREFIX, EXPORTS_PREFIX
from mnsd.entry.snapshot import SNAPSHOT_BUCKET, SNAPSHOT_PREFIX
from mnsd.storage.dynamodb.items.layout import LOGGING_ATTRIBUTE

ROOT = Path(__file__).resolve().parents[1]
# Where the backlog snapshot's counts come from (context `backlogSnapshot`): `counts`, each queue's counts read daily
# by the snapshot function (the default: the message table is not exported); `export`, full exports of the message
# and meta tables.
BACKLOG_SOURCES = ("counts", "export")
BACKLOG_INPUTS = {"counts": ("backlog",), "export": ("messages", "meta")}
SNAPSHOT_LABEL = "backlog"  # exports/backlog/: the snapshot function's objects


def job_inputs(backlog_source: str = BACKLOG_SOURCES[0]) -> dict[str, tuple[str, ...]]:
    """Each job's inputs (labels under `exports/`) with the backlog snapshot taken from `backlog_source`."""
    return {
        "queue_hourly": ("log",),
        "subscription_hourly": ("log",),
        "poison_messages": ("log",),
        "backlog_snapshot": BACKLOG_INPUTS[backlog_source],
    }


def exported_tables(backlog_source: str = BACKLOG_SOURCES[0]) -> tuple[str, ...]:
    """The tables exported daily: those some job reads."""
    inputs = {label for labels in job_inputs(backlog_source).values() for label in labels}
    return tuple(label for label in ("log", "messages", "meta") if label in inputs)


JOB_INPUTS = job_inputs()
DATABASE = "mns_analytics"
EXPORTS_CRON = events.Schedule.cron(hour="2", minute="0")  # exports take minutes; the jobs start at 03:00
SNAPSHOT_TIMEOUT = Duration.minutes(5)  # a few ms of CPU a queue, 16 read at once (bench/results/sampler.md)
SNAPSHOT_MEMORY_MB = 1769  # one full vCPU, as the metrics sampler's
JOBS_CRON = "cron(0 3 * * ? *)"
FAILED_STATES = ("FAILED", "TIMEOUT", "ERROR")
# Spark on the Glue Data Catalog (Glue 5.1, --enable-glue-datacatalog) reads the catalog and the `default`
# database when the session starts, whatever database the job names; then the job's own database, tables and
# partitions: CREATE DATABASE/TABLE IF NOT EXISTS, a DROP/CREATE when the table's columns changed, MSCK REPAIR.
CATALOG_READ = ("glue:GetDatabase", "glue:GetDatabases", "glue:GetUserDefinedFunctions")
CATALOG_WRITE = (
    "glue:CreateDatabase",
    "glue:GetTable",
    "glue:GetTables",
    "glue:CreateTable",
    "glue:UpdateTable",
    "glue:DeleteTable",
    "glue:GetPartition",
    "glue:GetPartitions",
    "glue:BatchGetPartition",
    "glue:CreatePartition",
    "glue:BatchCreatePartition",
)


def catalog_statements(arn: Callable[[str], str]) -> list[iam.PolicyStatement]:
    """What the job role may do in the Data Catalog; `arn("database/x")` is that catalog resource's ARN."""
    databases = ("default", DATABASE)
    return [
        iam.PolicyStatement(
            actions=list(CATALOG_READ),
            resources=[arn("catalog"), *(arn(f"database/{name}") for name in databases)]
            + [arn(f"userDefinedFunction/{name}/*") for name in databases],
        ),
        iam.PolicyStatement(
            actions=list(CATALOG_WRITE),
            resources=[arn("catalog"), arn(f"database/{DATABASE}"), arn(f"table/{DATABASE}/*")],
        ),
    ]


def operation_log(functions: Functions, messages: dynamodb.ITable) -> lambda_.Function:
    """The function that turns the message table's stream into log records of LoggingEnabled queues.

    Only leases of logging queues carry the flag `l`: the event filter keeps every other change (the
    bulk of the traffic) from invoking the function at all.
    """
    function = functions.add("oplog", timeout=Duration.seconds(60))
    flagged = {LOGGING_ATTRIBUTE: {"BOOL": lambda_.FilterRule.is_equal(True)}}
    function.add_event_source(
        sources.DynamoEventSource(
            messages,
            starting_position=lambda_.StartingPosition.LATEST,
            batch_size=100,
            max_batching_window=Duration.seconds(1),
            bisect_batch_on_error=True,
            retry_attempts=5,
            filters=[
                lambda_.FilterCriteria.filter({"dynamodb": {"NewImage": flagged}}),
                lambda_.FilterCriteria.filter({"dynamodb": {"OldImage": flagged}}),
            ],
        )
    )
    return function


class Exports(Construct):
    """A daily full export (DynamoDB JSON) of each analytics table to `exports/<label>` of `bucket`."""

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        functions: Functions,
        bucket: s3.IBucket,
        tables: Mapping[str, dynamodb.ITable],
    ) -> None:
        super().__init__(scope, id)
        self.function = functions.add(
            "export_tables",
            shared_secrets=False,
            environment={
                EXPORT_BUCKET: bucket.bucket_name,
                EXPORT_TABLES: ",".join(f"{label}={table.table_arn}" for label, table in tables.items()),
            },
        )
        self.function.add_to_role_policy(
            iam.PolicyStatement(
                actions=["dynamodb:ExportTableToPointInTime"], resources=[t.table_arn for t in tables.values()]
            )
        )
        # DynamoDB writes the export as the caller, with keys of its own below the prefix.
        self.function.add_to_role_policy(
            iam.PolicyStatement(
                actions=["s3:PutObject", "s3:PutObjectAcl", "s3:AbortMultipartUpload"],
                resources=[bucket.arn_for_objects(f"{EXPORTS_PREFIX}*")],
            )
        )
        functions.grant_key(self.function)  # DynamoDB reads the tables and S3 writes the export as the caller
        self.rule = events.Rule(self, "Schedule", schedule=EXPORTS_CRON)
        self.rule.add_target(targets.LambdaFunction(self.function, retry_attempts=2))


class BacklogSnapshots(Construct):
    """Daily with the exports (`rule`): every queue's counts, read from the message and meta tables as GetQueueAttributes
    reads them, written to `exports/backlog/<epoch ms>.json.gz` of `bucket` for the job `backlog_snapshot`."""

    def __init__(
        self, scope: Construct, id: str, *, functions: Functions, bucket: s3.IBucket, rule: events.Rule
    ) -> None:
        super().__init__(scope, id)
        prefix = f"{EXPORTS_PREFIX}{SNAPSHOT_LABEL}"
        self.bucket = bucket
        self.function = functions.add(
            "snapshot_backlog",
            timeout=SNAPSHOT_TIMEOUT,
            memory_size=SNAPSHOT_MEMORY_MB,
            shared_secrets=False,  # it serves no MNS call
            environment={SNAPSHOT_BUCKET: bucket.bucket_name, SNAPSHOT_PREFIX: prefix},
        )
        self.function.add_to_role_policy(
            iam.PolicyStatement(actions=["s3:PutObject"], resources=[bucket.arn_for_objects(f"{prefix}/*")])
        )
        functions.grant_key(self.function)  # the bucket's objects are encrypted under the stack's key, if any
        rule.add_target(targets.LambdaFunction(self.function, retry_attempts=2))

    def reviewed(self) -> list[tuple[IConstruct, str, str]]:
        """cdk-nag's finding on the function's S3 write, accepted: (construct, rule, reason)."""
        resolved = Stack.of(self).resolve(self.bucket.bucket_arn)
        data = "<{}.Arn>".format(resolved["Fn::GetAtt"][0])
        return [
            (
                self.function.role or self.function,
                f"AwsSolutions-IAM5[Resource::{data}/{EXPORTS_PREFIX}{SNAPSHOT_LABEL}/*]",
                "The backlog snapshot writes one object a day, named by its time, below its own prefix only.",
            )
        ]


class Analytics(Construct):
    """`bucket` holds the exports (`exports/<label>`) and receives the tables (`analytics/<job>/`).

    With `encryption`'s key the jobs run under a security configuration that encrypts what they write to S3
    (SSE-KMS), their CloudWatch logs (SSE-KMS) and their bookmarks (CSE-KMS) with it.
    """

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        bucket: s3.IBucket,
        log_ttl_hours: int,
        jobs_cron: str = JOBS_CRON,
        encryption: Encryption | None = None,
        backlog_source: str = BACKLOG_SOURCES[0],
    ) -> None:
        super().__init__(scope, id)
        stack = Stack.of(self)
        encryption = encryption or Encryption()
        self.database = glue.CfnDatabase(
            self,
            "Database",
            catalog_id=stack.account,
            database_input=glue.CfnDatabase.DatabaseInputProperty(name=DATABASE),
        )
        self.role = self._job_role(bucket)
        # Glue 5 writes `<prefix>/output` (stdout, stderr) and `<prefix>/error` (Spark and Glue logs); our own
        # groups, kept a month, instead of the account's shared /aws-glue/jobs/* kept forever.
        log_prefix = f"/aws-glue/{stack.stack_name}"
        for kind in ("output", "error"):
            group = logs.LogGroup(
                self,
                f"{kind.title()}Logs",
                log_group_name=f"{log_prefix}/{kind}",
                retention=LOG_RETENTION,
                removal_policy=RemovalPolicy.DESTROY,
                encryption_key=encryption.key,
            )
            group.grant_write(self.role)
            if encryption.key is not None:  # a security configuration's CloudWatch encryption associates the key
                group.grant(self.role, "logs:AssociateKmsKey")
        package = assets.Asset(
            self, "Package", path=str(ROOT), exclude=["*", ".*", "!glue_jobs", "!glue_jobs/**", "**/__pycache__"]
        )
        self._read_asset(package)
        self.security_configuration = self._security_configuration(encryption)
        self.jobs: dict[str, glue.CfnJob] = {}
        for job, inputs in job_inputs(backlog_source).items():
            script = assets.Asset(self, f"{job}Script", path=str(ROOT / "glue_jobs" / "jobs" / f"{job}.py"))
            self._read_asset(script)
            arguments = {
                "--extra-py-files": package.s3_object_url,
                "--enable-glue-datacatalog": "true",
                "--output_path": bucket.s3_url_for_object(f"{ANALYTICS_PREFIX}{job}/"),
                "--database": DATABASE,
                "--log_ttl_hours": str(log_ttl_hours),
                "--custom-logGroup-prefix": log_prefix,
            }
            arguments |= {f"--{name}_export": bucket.s3_url_for_object(f"{EXPORTS_PREFIX}{name}") for name in inputs}
            self.jobs[job] = glue.CfnJob(
                self,
                job,
                name=f"{stack.stack_name}-{job}",
                role=self.role.role_arn,
                glue_version="5.1",
                command=glue.CfnJob.JobCommandProperty(
                    name="glueetl", python_version="3", script_location=script.s3_object_url
                ),
                default_arguments=arguments,
                worker_type="G.1X",
                number_of_workers=2,
                timeout=60,
                max_retries=0,
                security_configuration=self.security_configuration.name if self.security_configuration else None,
            )
        self.trigger = glue.CfnTrigger(
            self,
            "JobsSchedule",
            type="SCHEDULED",
            schedule=jobs_cron,
            start_on_creation=True,
            actions=[glue.CfnTrigger.ActionProperty(job_name=j.name) for j in self.jobs.values()],
        )
        for cfn_job in self.jobs.values():
            self.trigger.node.add_dependency(cfn_job)

    def _security_configuration(self, encryption: Encryption) -> glue.CfnSecurityConfiguration | None:
        """Everything the jobs write under the key; the job role may use it (S3 through S3, the bookmarks and
        logs through Glue and CloudWatch Logs: any path, this key only). None without a key."""
        if encryption.key is None:
            return None
        key = encryption.key.key_arn
        configuration = glue.CfnSecurityConfiguration(
            self,
            "SecurityConfiguration",
            name=f"{Stack.of(self).stack_name}-analytics",
            encryption_configuration=glue.CfnSecurityConfiguration.EncryptionConfigurationProperty(
                s3_encryptions=[
                    glue.CfnSecurityConfiguration.S3EncryptionProperty(s3_encryption_mode="SSE-KMS", kms_key_arn=key)
                ],
                cloud_watch_encryption=glue.CfnSecurityConfiguration.CloudWatchEncryptionProperty(
                    cloud_watch_encryption_mode="SSE-KMS", kms_key_arn=key
                ),
                job_bookmarks_encryption=glue.CfnSecurityConfiguration.JobBookmarksEncryptionProperty(
                    job_bookmarks_encryption_mode="CSE-KMS", kms_key_arn=key
                ),
            ),
        )
        encryption.grant_use(self.role, services=None)
        return configuration

    def _read_asset(self, asset: assets.Asset) -> None:
        self.role.add_to_policy(
            iam.PolicyStatement(actions=["s3:GetObject"], resources=[asset.bucket.arn_for_objects(asset.s3_object_key)])
        )

    def _job_role(self, bucket: s3.IBucket) -> iam.Role:
        stack = Stack.of(self)
        role = iam.Role(self, "JobRole", assumed_by=iam.ServicePrincipal("glue.amazonaws.com"))
        role.add_to_policy(iam.PolicyStatement(actions=["s3:ListBucket"], resources=[bucket.bucket_arn]))
        role.add_to_policy(
            iam.PolicyStatement(actions=["s3:GetObject"], resources=[bucket.arn_for_objects(f"{EXPORTS_PREFIX}*")])
        )
        role.add_to_policy(
            iam.PolicyStatement(
                actions=["s3:GetObject", "s3:PutObject", "s3:DeleteObject"],
                resources=[bucket.arn_for_objects(f"{ANALYTICS_PREFIX}*")],
            )
        )
        catalog = lambda resource: stack.format_arn(  # noqa: E731
            service="glue", resource=resource, arn_format=ArnFormat.NO_RESOURCE_NAME
        )
        for statement in catalog_statements(catalog):
            role.add_to_policy(statement)
        return role

    def notify_failures(self, topic: sns.ITopic) -> events.Rule:
        """Every run of the jobs that ends FAILED, TIMEOUT or ERROR is published to `topic` (the alarm topic)."""
        rule = events.Rule(
            self,
            "JobFailures",
            description="A Glue job of the analytics failed, timed out or stopped on an error",
            event_pattern=events.EventPattern(
                source=["aws.glue"],
                detail_type=["Glue Job State Change"],
                detail={"jobName": [job.name for job in self.jobs.values()], "state": list(FAILED_STATES)},
            ),
        )
        rule.add_target(targets.SnsTopic(topic))
        return rule
