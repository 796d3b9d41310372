"""Encryption under the company's own KMS key: with `kmsKeyArn` (or `createKmsKey=true`) every resource that stores
data is encrypted under it, and only the roles that use that data may use it; without, the template is unchanged.

Resources are found by type, so that a table, secret, queue, topic, log group, bucket, Glue job or state machine
added later without the key fails here.
"""

from __future__ import annotations

import json
from pathlib import Path

import aws_cdk as cdk
import pytest
from aws_cdk.assertions import Template

from infra.encryption import KEY_USE_ACTIONS, LOGS_KEY_ACTIONS
from infra.lint import findings
from infra.stack import MnsStack
from tests.support.stack import TEST_CONTEXT, synthesized

KEY_ARN = "arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"
# Functions that read or write no encrypted data: the console serves its own files.
KEYLESS_FUNCTIONS = {"console.handler"}


@pytest.fixture(scope="module")
def imported() -> tuple[Template, Path]:
    _, template, outdir = synthesized(kmsKeyArn=KEY_ARN)
    return template, outdir


@pytest.fixture(scope="module")
def created() -> Template:
    return synthesized(createKmsKey="true").template


@pytest.fixture(scope="module")
def unkeyed() -> Template:
    return synthesized().template


@pytest.fixture(params=["imported", "created"])
def keyed(request: pytest.FixtureRequest) -> tuple[Template, object]:
    """A template with the key, and how its resources name the key's ARN."""
    if request.param == "imported":
        return request.getfixturevalue("imported")[0], KEY_ARN
    template = request.getfixturevalue("created")
    (key,) = template.find_resources("AWS::KMS::Key")
    return template, {"Fn::GetAtt": [key, "Arn"]}


def properties(template: Template, type_: str) -> dict[str, dict]:
    found = {name: resource.get("Properties", {}) for name, resource in template.find_resources(type_).items()}
    assert found, f"no {type_}"
    return found


def statements(template: Template) -> list[dict]:
    return [
        statement
        for policy in template.find_resources("AWS::IAM::Policy").values()
        for statement in policy["Properties"]["PolicyDocument"]["Statement"]
    ]


def as_list(value: object) -> list:
    return value if isinstance(value, list) else [value]


# ---------------------------------------------------------------- with the key


def test_every_table_is_encrypted_under_the_key(keyed) -> None:
    template, key = keyed
    for name, table in properties(template, "AWS::DynamoDB::Table").items():
        assert table.get("SSESpecification") == {"SSEEnabled": True, "SSEType": "KMS", "KMSMasterKeyId": key}, name


@pytest.mark.parametrize("type_", ["AWS::SecretsManager::Secret", "AWS::Logs::LogGroup"])
def test_every_secret_and_log_group_is_encrypted_under_the_key(keyed, type_: str) -> None:
    template, key = keyed
    for name, resource in properties(template, type_).items():
        assert resource.get("KmsKeyId") == key, name


def test_every_queue_and_topic_is_encrypted_under_the_key(keyed) -> None:
    template, key = keyed
    for type_ in ("AWS::SQS::Queue", "AWS::SNS::Topic"):
        for name, resource in properties(template, type_).items():
            assert resource.get("KmsMasterKeyId") == key, name
            assert "SqsManagedSseEnabled" not in resource, name


def test_every_bucket_holding_data_is_sse_kms_under_the_key(keyed) -> None:
    """All but the server access log target, which S3 requires to be SSE-S3."""
    template, key = keyed
    buckets = properties(template, "AWS::S3::Bucket")
    log_targets = {
        bucket["LoggingConfiguration"]["DestinationBucketName"]["Ref"]
        for bucket in buckets.values()
        if "LoggingConfiguration" in bucket
    }
    assert len(log_targets) == 1
    for name, bucket in buckets.items():
        (rule,) = bucket["BucketEncryption"]["ServerSideEncryptionConfiguration"]
        default = rule["ServerSideEncryptionByDefault"]
        if name in log_targets:
            assert default == {"SSEAlgorithm": "AES256"}, name
        else:
            assert default == {"SSEAlgorithm": "aws:kms", "KMSMasterKeyID": key}, name
            assert rule["BucketKeyEnabled"] is True


def test_every_glue_job_runs_under_a_security_configuration_of_the_key(keyed) -> None:
    template, key = keyed
    configurations = {
        resource["Name"]: resource["EncryptionConfiguration"]
        for resource in properties(template, "AWS::Glue::SecurityConfiguration").values()
    }
    for name, job in properties(template, "AWS::Glue::Job").items():
        configuration = configurations[job["SecurityConfiguration"]]
        assert configuration == {
            "S3Encryptions": [{"S3EncryptionMode": "SSE-KMS", "KmsKeyArn": key}],
            "CloudWatchEncryption": {"CloudWatchEncryptionMode": "SSE-KMS", "KmsKeyArn": key},
            "JobBookmarksEncryption": {"JobBookmarksEncryptionMode": "CSE-KMS", "KmsKeyArn": key},
        }, name


def test_every_state_machine_and_function_environment_is_encrypted_under_the_key(keyed) -> None:
    template, key = keyed
    for name, machine in properties(template, "AWS::StepFunctions::StateMachine").items():
        encryption = machine.get("EncryptionConfiguration", {})
        assert (encryption.get("Type"), encryption.get("KmsKeyId")) == ("CUSTOMER_MANAGED_KMS_KEY", key), name
    for name, function in properties(template, "AWS::Lambda::Function").items():
        assert function.get("KmsKeyArn") == key, name


def test_roles_get_exactly_encrypt_decrypt_and_data_keys_on_the_key_only(keyed) -> None:
    template, key = keyed
    kms_statements = [s for s in statements(template) if any(a.startswith("kms:") for a in as_list(s["Action"]))]
    assert kms_statements
    for statement in kms_statements:
        assert sorted(as_list(statement["Action"])) == sorted(KEY_USE_ACTIONS), statement
        assert statement["Resource"] == key, statement


def test_each_function_that_touches_data_may_use_the_key_through_the_services_only(keyed) -> None:
    template, key = keyed
    roles = {
        function["Handler"]: function["Role"]["Fn::GetAtt"][0]
        for function in properties(template, "AWS::Lambda::Function").values()
    }
    for handler, role in roles.items():
        policies = template.find_resources("AWS::IAM::Policy", {"Properties": {"Roles": [{"Ref": role}]}})
        granted = [
            s
            for policy in policies.values()
            for s in policy["Properties"]["PolicyDocument"]["Statement"]
            if s.get("Resource") == key
        ]
        if handler in KEYLESS_FUNCTIONS:
            assert granted == [], handler
            continue
        (statement,) = granted
        services = json.dumps(statement["Condition"]["StringEquals"]["kms:ViaService"])
        assert all(f'"{name}.' in services for name in ("dynamodb", "secretsmanager", "sqs", "states", "s3")), handler


def test_the_keyed_template_passes_cdk_nag_and_cfn_lint(imported: tuple[Template, Path]) -> None:
    _, outdir = imported  # the fixture's synth already failed on any unreviewed cdk-nag finding
    assert findings(outdir / "Mns.template.json") == []


def test_a_created_key_rotates_is_kept_and_lets_cloudwatch_logs_use_it(created: Template) -> None:
    (key,) = created.find_resources("AWS::KMS::Key").values()
    assert key["Properties"]["EnableKeyRotation"] is True
    assert key["DeletionPolicy"] == "Retain"
    policy = key["Properties"]["KeyPolicy"]["Statement"]
    (logs,) = [s for s in policy if "kms:EncryptionContext:aws:logs:arn" in json.dumps(s.get("Condition"))]
    assert sorted(logs["Action"]) == sorted(LOGS_KEY_ACTIONS)
    assert '"logs."' in json.dumps(logs["Principal"])  # the Region's CloudWatch Logs: logs.<region>.<suffix>
    publishers = json.dumps([s["Principal"] for s in policy])
    assert "cloudwatch.amazonaws.com" in publishers and "events.amazonaws.com" in publishers


def test_a_key_arn_and_a_created_key_together_are_refused(tmp_path: Path) -> None:
    app = cdk.App(context={**TEST_CONTEXT, "kmsKeyArn": KEY_ARN, "createKmsKey": "true"}, outdir=str(tmp_path))
    with pytest.raises(ValueError, match="not both"):
        MnsStack(app, "Mns", env=cdk.Environment(region="us-east-1"))


# ---------------------------------------------------------------- without a key: the services' own keys, as before


def test_without_a_key_nothing_names_a_customer_managed_key(unkeyed: Template) -> None:
    assert unkeyed.find_resources("AWS::KMS::Key") == {}
    assert unkeyed.find_resources("AWS::Glue::SecurityConfiguration") == {}
    for table in properties(unkeyed, "AWS::DynamoDB::Table").values():
        assert "SSESpecification" not in table  # AWS-owned key
    for type_, attribute in (
        ("AWS::SecretsManager::Secret", "KmsKeyId"),  # aws/secretsmanager
        ("AWS::Logs::LogGroup", "KmsKeyId"),
        ("AWS::SNS::Topic", "KmsMasterKeyId"),
        ("AWS::StepFunctions::StateMachine", "EncryptionConfiguration"),
        ("AWS::Lambda::Function", "KmsArn"),
        ("AWS::Lambda::Function", "KmsKeyArn"),
        ("AWS::Glue::Job", "SecurityConfiguration"),
    ):
        for name, resource in properties(unkeyed, type_).items():
            assert attribute not in resource, (type_, name)
    for name, queue in properties(unkeyed, "AWS::SQS::Queue").items():
        assert queue.get("SqsManagedSseEnabled") is True and "KmsMasterKeyId" not in queue, name
    for name, bucket in properties(unkeyed, "AWS::S3::Bucket").items():
        (rule,) = bucket["BucketEncryption"]["ServerSideEncryptionConfiguration"]
        assert rule["ServerSideEncryptionByDefault"] == {"SSEAlgorithm": "AES256"}, name
    assert not [s for s in statements(unkeyed) if any(a.startswith("kms:") for a in as_list(s["Action"]))]
