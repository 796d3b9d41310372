"""The app synthesized as `cdk synth` does (cdk-nag included), and readers of its template: logical ids, a
function's role statements, its table access.

A synthesis takes seconds: `synthesized(**context)` makes one per context for the whole test session (each worker's),
shared by every module that reads it; `synth(outdir, ...)` makes a fresh one, for a test that needs its own."""

from __future__ import annotations

import atexit
import json
import shutil
import tempfile
from pathlib import Path
from typing import NamedTuple

import aws_cdk as cdk
from aws_cdk.assertions import Template

from infra.nag import build
from infra.stack import MnsStack

# Item access on keys of one shape (`infra.functions.KEYED_GRANTS`), beside the table-wide grants.
KEYED_CONDITIONS = {
    '"dynamodb:LeadingKeys": ["rate#*"]',
    '"dynamodb:LeadingKeys": ["*#account"]',
    '"dynamodb:LeadingKeys": ["*#G*", "*#D*"]',
}


# Synth without running pip for the layer (tests/infra/test_layer.py covers it), with construct paths.
TEST_CONTEXT = {"aws:cdk:bundling-stacks": [], "aws:cdk:enable-path-metadata": True}


def synth(outdir: Path, **context: object) -> tuple[MnsStack, Template]:
    """Synthesizes the app as `cdk synth` does: cdk-nag's validation fails the synth on any unreviewed finding."""
    app = cdk.App(context={**TEST_CONTEXT, **context}, outdir=str(outdir))
    stack = build(app, env=cdk.Environment(region="us-east-1"))
    app.synth()
    return stack, Template.from_stack(stack)


class Synthesized(NamedTuple):
    stack: MnsStack
    template: Template
    outdir: Path  # its cloud assembly (`Mns.template.json`, ...)


_SESSION: dict[str, Synthesized] = {}


def synthesized(**context: object) -> Synthesized:
    """The app synthesized with `context`, once per context for the session: readers only (a test that would change
    the stack or the assembly synthesizes its own with `synth`)."""
    key = json.dumps(context, sort_keys=True)
    if key not in _SESSION:
        outdir = Path(tempfile.mkdtemp(prefix="cdk.out-"))
        atexit.register(shutil.rmtree, outdir, ignore_errors=True)
        _SESSION[key] = Synthesized(*synth(outdir, **context), outdir)
    return _SESSION[key]


def logical_id(template: Template, type_: str, construct_path: str) -> str:
    """The logical id of the resource of `type_` whose CDK path is `construct_path`."""
    for name, resource in template.find_resources(type_).items():
        if resource.get("Metadata", {}).get("aws:cdk:path") == construct_path:
            return name
    raise AssertionError(f"no {type_} at {construct_path}")


def role_statements(template: Template, function: str) -> list[dict]:
    role = logical_id(template, "AWS::IAM::Role", f"Mns/Functions/Role-{function}/Resource")
    policies = template.find_resources("AWS::IAM::Policy", {"Properties": {"Roles": [{"Ref": role}]}})
    assert len(policies) == 1, f"{function}: {len(policies)} policies"
    return next(iter(policies.values()))["Properties"]["PolicyDocument"]["Statement"]


def table_access(template: Template, function: str) -> dict[str, set[str]]:
    """Table logical id -> the DynamoDB actions `function` may perform on it."""
    access: dict[str, set[str]] = {}
    for statement in role_statements(template, function):
        if "Condition" in statement and any(c in json.dumps(statement["Condition"]) for c in KEYED_CONDITIONS):
            continue  # keys of one shape only (`test_keyed_grants_name_their_keys_and_one_action`)
        actions = statement["Action"] if isinstance(statement["Action"], list) else [statement["Action"]]
        resources = statement.get("Resource", [])
        for resource in resources if isinstance(resources, list) else [resources]:
            if resource != "*" and any(action.startswith("dynamodb:") for action in actions):
                if "Fn::Join" in resource:  # a table's indexes: `{table arn}/index/*`
                    resource = resource["Fn::Join"][1][0]
                access.setdefault(resource["Fn::GetAtt"][0], set()).update(actions)
    return access
