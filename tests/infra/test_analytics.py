"""The analytics construct synthesized alone: four Glue 5.1 jobs, their trigger, database and package."""

from __future__ import annotations

import json
from pathlib import Path

import aws_cdk as cdk
import pytest
from aws_cdk import aws_s3 as s3
from aws_cdk.assertions import Template

from infra.analytics import DATABASE, JOB_INPUTS, Analytics, exported_tables


@pytest.fixture(scope="module")
def synthesized(tmp_path_factory: pytest.TempPathFactory) -> tuple[Template, Path]:
    outdir = tmp_path_factory.mktemp("cdk.out")
    app = cdk.App(outdir=str(outdir))
    stack = cdk.Stack(app, "Analytics", env=cdk.Environment(account="111111111111", region="us-east-1"))
    Analytics(stack, "Analytics", bucket=s3.Bucket(stack, "Data"), log_ttl_hours=168)
    app.synth()
    return Template.from_stack(stack), outdir


@pytest.fixture(scope="module")
def template(synthesized: tuple[Template, Path]) -> Template:
    return synthesized[0]


def test_one_glue_5_1_job_per_transform_with_its_inputs(template: Template) -> None:
    jobs = template.find_resources("AWS::Glue::Job")
    assert len(jobs) == 4
    by_name = {props["Properties"]["Name"].split("-", 1)[1]: props["Properties"] for props in jobs.values()}
    assert sorted(by_name) == sorted(JOB_INPUTS)
    for job, props in by_name.items():
        assert props["GlueVersion"] == "5.1"
        assert props["Command"]["Name"] == "glueetl"
        arguments = props["DefaultArguments"]
        assert arguments["--database"] == DATABASE
        assert arguments["--enable-glue-datacatalog"] == "true"
        assert arguments["--log_ttl_hours"] == "168"
        assert {k for k in arguments if k.endswith("_export")} == {f"--{name}_export" for name in JOB_INPUTS[job]}


def test_the_trigger_starts_every_job_on_a_schedule(template: Template) -> None:
    triggers = template.find_resources("AWS::Glue::Trigger")
    (trigger,) = triggers.values()
    assert trigger["Properties"]["Type"] == "SCHEDULED"
    assert len(trigger["Properties"]["Actions"]) == 4
    assert len(trigger["DependsOn"]) == 4  # actions name the jobs by string: created after them
    template.has_resource_properties("AWS::Glue::Database", {"DatabaseInput": {"Name": DATABASE}})


def test_the_jobs_read_the_export_prefixes_and_write_the_analytics_prefix(template: Template) -> None:
    statements = [
        statement
        for policy in template.find_resources("AWS::IAM::Policy").values()
        for statement in policy["Properties"]["PolicyDocument"]["Statement"]
    ]
    resources = json.dumps([s["Resource"] for s in statements])
    assert "/exports/*" in resources and "/analytics/*" in resources
    writes = [s for s in statements if "s3:PutObject" in s["Action"]]
    assert writes and all("/exports/" not in json.dumps(s["Resource"]) for s in writes)  # exports are read-only


def test_the_package_asset_has_glue_jobs_at_its_root(synthesized: tuple[Template, Path]) -> None:
    _, outdir = synthesized
    staged = [p for p in outdir.glob("asset.*") if p.is_dir() and (p / "glue_jobs").is_dir()]
    assert len(staged) == 1
    names = {p.relative_to(staged[0]).as_posix() for p in staged[0].rglob("*") if p.is_file()}
    assert "glue_jobs/transforms.py" in names and "glue_jobs/jobs/entry.py" in names
    assert all(n.startswith("glue_jobs/") and "__pycache__" not in n for n in names)


def test_the_backlog_job_reads_the_snapshots_by_default_and_the_table_exports_when_chosen() -> None:
    arguments = {}
    for source in ("counts", "export"):
        app = cdk.App()
        stack = cdk.Stack(app, "Analytics", env=cdk.Environment(account="111111111111", region="us-east-1"))
        Analytics(stack, "Analytics", bucket=s3.Bucket(stack, "Data"), log_ttl_hours=168, backlog_source=source)
        (job,) = [
            j["Properties"]
            for j in Template.from_stack(stack).find_resources("AWS::Glue::Job").values()
            if j["Properties"]["Name"].endswith("-backlog_snapshot")
        ]
        arguments[source] = {k for k in job["DefaultArguments"] if k.endswith("_export")}
    assert arguments == {"counts": {"--backlog_export"}, "export": {"--messages_export", "--meta_export"}}
    assert exported_tables() == ("log",) and exported_tables("export") == ("log", "messages", "meta")
