"""Analytics: the Glue 5.1 jobs of `glue_jobs/` over the DynamoDB exports, their database and schedule.

The exports themselves are the scheduled `functions/export_tables.py` (ExportTableToPointInTime of the
log, message and meta tables to `exports/<label>` of the data bucket). A scheduled Glue trigger runs the
four jobs, which read the newest export under each prefix, write Parquet under `analytics/<job>/` and
register the tables in the Glue database. Contract of the jobs: docs/analytics.md.
"""

from __future__ import annotations

from pathlib import Path

from aws_cdk import Stack
from aws_cdk import aws_glue as glue
from aws_cdk import aws_iam as iam
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_s3_assets as assets
from constructs import Construct

from infra.storage import ANALYTICS_PREFIX, EXPORTS_PREFIX

ROOT = Path(__file__).resolve().parents[1]
JOB_INPUTS = {
    "queue_hourly": ("log",),
    "subscription_hourly": ("log",),
    "poison_messages": ("log",),
    "backlog_snapshot": ("messages", "meta"),
}
DATABASE = "mns_analytics"


class Analytics(Construct):
    """`bucket` holds the exports (`exports/<label>`) and receives the tables (`analytics/<job>/`)."""

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        bucket: s3.IBucket,
        log_ttl_hours: int,
        jobs_cron: str = "cron(0 3 * * ? *)",
    ) -> None:
        super().__init__(scope, id)
        stack = Stack.of(self)
        self.database = glue.CfnDatabase(
            self,
            "Database",
            catalog_id=stack.account,
            database_input=glue.CfnDatabase.DatabaseInputProperty(name=DATABASE),
        )
        self.role = self._job_role(bucket)
        package = assets.Asset(
            self, "Package", path=str(ROOT), exclude=["*", ".*", "!glue_jobs", "!glue_jobs/**", "**/__pycache__"]
        )
        package.grant_read(self.role)
        self.jobs: dict[str, glue.CfnJob] = {}
        for job, inputs in JOB_INPUTS.items():
            script = assets.Asset(self, f"{job}Script", path=str(ROOT / "glue_jobs" / "jobs" / f"{job}.py"))
            script.grant_read(self.role)
            arguments = {
                "--extra-py-files": package.s3_object_url,
                "--enable-glue-datacatalog": "true",
                "--output_path": bucket.s3_url_for_object(f"{ANALYTICS_PREFIX}{job}/"),
                "--database": DATABASE,
                "--log_ttl_hours": str(log_ttl_hours),
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
            )
        self.trigger = glue.CfnTrigger(
            self,
            "JobsSchedule",
            type="SCHEDULED",
            schedule=jobs_cron,
            start_on_creation=True,
            actions=[glue.CfnTrigger.ActionProperty(job_name=j.name) for j in self.jobs.values()],
        )
        for job in self.jobs.values():
            self.trigger.node.add_dependency(job)

    def _job_role(self, bucket: s3.IBucket) -> iam.Role:
        stack = Stack.of(self)
        role = iam.Role(self, "JobRole", assumed_by=iam.ServicePrincipal("glue.amazonaws.com"))
        bucket.grant_read(role, f"{EXPORTS_PREFIX}*")
        bucket.grant_read_write(role, f"{ANALYTICS_PREFIX}*")
        catalog = f"arn:{stack.partition}:glue:{stack.region}:{stack.account}"
        role.add_to_policy(
            iam.PolicyStatement(
                actions=[
                    "glue:GetDatabase",
                    "glue:CreateDatabase",
                    "glue:GetTable",
                    "glue:CreateTable",
                    "glue:UpdateTable",
                    "glue:GetPartition",
                    "glue:GetPartitions",
                    "glue:BatchCreatePartition",
                    "glue:CreatePartition",
                ],
                resources=[f"{catalog}:catalog", f"{catalog}:database/{DATABASE}", f"{catalog}:table/{DATABASE}/*"],
            )
        )
        role.add_to_policy(
            iam.PolicyStatement(
                actions=["logs:CreateLogGroup", "logs:CreateLogStream", "logs:PutLogEvents"],
                resources=[f"arn:{stack.partition}:logs:{stack.region}:{stack.account}:log-group:/aws-glue/*"],
            )
        )
        return role
