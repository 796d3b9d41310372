"""The synthesized template, as `app.py` builds it (cdk-nag included): routes, functions, grants, storage, alarms."""

import json
from pathlib import Path

import aws_cdk as cdk
import pytest
from aws_cdk.assertions import Match, Template

from infra.analytics import DATABASE, JOB_INPUTS
from infra.capacity import MIN_UNRESERVED, Capacity
from infra.console import ROUTE_KEYS as CONSOLE_ROUTE_KEYS
from infra.functions import ROOT, SERVICE_GRANTS, pinned_version
from infra.grants import GRANTS
from infra.lint import findings
from infra.stack import MnsStack
from mnsd.access.keys import parse_keys
from mnsd.push.signing import CERTIFICATE_PATH
from mnsd.push.workflow import definition
from mnsd.request.routes import ROUTES
from tests.support.stack import TEST_CONTEXT, logical_id, role_statements, synth, table_access
from tests.support.stack import synthesized as shared_synth

# Every function's declared table access (`infra.grants`), the service grants aside.
DECLARED_GRANTS = {name: tuple(g for g in grants if g not in SERVICE_GRANTS) for name, grants in GRANTS.items()}
# Item access on keys of one shape (`infra.functions.KEYED_GRANTS`), beside the table-wide grants.
KEYED_KINDS = {"count", "account", "locate"}

# Actions that support no resource-level permissions, the only ones a policy may grant on "*": X-Ray, stream
# listing (stream event sources) and the log delivery of Step Functions.
ANY_RESOURCE_ACTIONS = {
    "xray:PutTraceSegments",
    "xray:PutTelemetryRecords",
    "xray:GetSamplingRules",
    "xray:GetSamplingTargets",
    "dynamodb:ListStreams",
    "logs:CreateLogDelivery",
    "logs:GetLogDelivery",
    "logs:UpdateLogDelivery",
    "logs:DeleteLogDelivery",
    "logs:ListLogDeliveries",
    "logs:PutResourcePolicy",
    "logs:DescribeResourcePolicies",
    "logs:DescribeLogGroups",
    "states:SendTaskSuccess",  # answers to task tokens: no resource type in the service authorization reference
    "states:SendTaskFailure",
    "states:SendTaskHeartbeat",
    "cloudwatch:GetMetricData",  # no resource type, no condition key: the console's minute chart (get_queue)
}
# Table actions that touch no item: reading a stream (event sources), exporting (tested on its own).
NOT_DATA_ACTIONS = {
    "dynamodb:DescribeStream",
    "dynamodb:GetRecords",
    "dynamodb:GetShardIterator",
    "dynamodb:ExportTableToPointInTime",
}
DATA_ACTIONS = {"read": {"dynamodb:GetItem", "dynamodb:Query"}, "write": {"dynamodb:PutItem", "dynamodb:UpdateItem"}}


@pytest.fixture(scope="module")
def synthesized() -> tuple[MnsStack, Template, Path]:
    return shared_synth()


@pytest.fixture(scope="module")
def template(synthesized: tuple[MnsStack, Template, Path]) -> Template:
    return synthesized[1]


COUNTER_CONDITION = '"dynamodb:LeadingKeys": ["rate#*"]'


def assert_alarms_on_waiting_messages(template: Template, queue: str) -> None:
    """One alarm watches the SQS queue of logical id `queue`, on the messages waiting in it."""
    alarmed = [
        alarm
        for alarm in template.find_resources("AWS::CloudWatch::Alarm").values()
        if alarm["Properties"].get("Dimensions")
        == [{"Name": "QueueName", "Value": {"Fn::GetAtt": [queue, "QueueName"]}}]
    ]
    assert len(alarmed) == 1 and alarmed[0]["Properties"]["MetricName"] == "ApproximateNumberOfMessagesVisible"


def test_synth_passes_cdk_nag_and_cfn_lint_with_no_finding(synthesized: tuple[MnsStack, Template, Path]) -> None:
    # The fixture's synth already failed on any cdk-nag finding not reviewed in infra/nag.py.
    _, _, outdir = synthesized
    assert findings(outdir / "Mns.template.json") == []


def test_every_route_has_its_own_function_with_the_shared_layer(synthesized) -> None:
    stack, template, _ = synthesized
    assert {*ROUTES, "not_found"} <= set(stack.functions.functions)
    functions = {
        name: template.find_resources("AWS::Lambda::Function", {"Properties": {"Handler": f"{name}.handler"}})
        for name in stack.functions.functions
    }
    assert all(len(found) == 1 for found in functions.values())
    layer = logical_id(template, "AWS::Lambda::LayerVersion", "Mns/Functions/Layer/Resource")
    for function in (next(iter(found.values())) for found in functions.values()):
        assert function["Properties"]["Runtime"] == "python3.13"  # Amazon Linux 2023 (python3.11: AL2, EOL 2026)
        assert function["Properties"]["Architectures"] == ["arm64"]
        assert {"Ref": layer} in function["Properties"]["Layers"]


def test_every_operation_route_and_the_catch_all_reach_the_api(template: Template) -> None:
    route_keys = {r["Properties"]["RouteKey"] for r in template.find_resources("AWS::ApiGatewayV2::Route").values()}
    assert route_keys == {f"{r.method} {r.path}" for r in ROUTES.values()} | {"$default"} | CONSOLE_ROUTE_KEYS


def test_api_sits_at_the_root_with_a_default_stage_and_access_logs(template: Template) -> None:
    template.has_resource_properties(
        "AWS::ApiGatewayV2::Stage",
        {"StageName": "$default", "AutoDeploy": True, "AccessLogSettings": {"DestinationArn": Match.any_value()}},
    )
    template.resource_count_is("AWS::ApiGatewayV2::DomainName", 0)


def test_long_polls_get_the_full_integration_timeout(template: Template) -> None:
    template.has_resource_properties("AWS::Lambda::Function", {"Handler": "get_messages.handler", "Timeout": 30})
    template.has_resource_properties("AWS::Lambda::Function", {"Handler": "get_queue.handler", "Timeout": 10})


def test_every_function_declares_its_table_access(synthesized) -> None:
    stack, _, _ = synthesized
    assert set(stack.functions.functions) == set(DECLARED_GRANTS)


@pytest.mark.parametrize("name", sorted(DECLARED_GRANTS))
def test_each_function_gets_exactly_the_table_data_access_it_declares(template: Template, name: str) -> None:
    tables = {
        table: logical_id(template, "AWS::DynamoDB::Table", f"Mns/Tables/{construct}/Resource")
        for table, construct in {
            "meta": "Meta",
            "messages": "Messages",
            "topic_messages": "TopicMessages",
            "log": "Log",
        }.items()
    }
    declared: dict[str, set[str]] = {}
    for grant in DECLARED_GRANTS[name]:
        table, kind = grant.split(".")
        if kind in KEYED_KINDS:
            continue
        declared.setdefault(table, set()).add(kind)
    access = {table: actions for table, actions in table_access(template, name).items() if actions - NOT_DATA_ACTIONS}
    assert set(access) == {tables[table] for table in declared}
    for table, kinds in declared.items():
        actions = access[tables[table]]
        assert (DATA_ACTIONS["read"] <= actions) == bool(kinds & {"read", "read_write"}), (table, kinds, actions)
        assert (DATA_ACTIONS["write"] <= actions) == bool(kinds & {"write", "read_write"}), (table, kinds, actions)
        assert ("dynamodb:UpdateItem" in actions) == bool(kinds & {"write", "read_write", "update"}), (table, kinds)


@pytest.mark.parametrize("name", ["post_messages", "get_messages", "fanout"])
def test_sends_and_receives_may_update_queue_records_and_nothing_more(template: Template, name: str) -> None:
    """The engine grows a busy queue's stripes and builds its ready index from its sends and receives: UpdateItem
    on the meta table; never a Put or Delete there (a send cannot create or delete queues)."""
    meta = logical_id(template, "AWS::DynamoDB::Table", "Mns/Tables/Meta/Resource")
    actions = table_access(template, name)[meta]
    assert "dynamodb:UpdateItem" in actions
    assert not {"dynamodb:PutItem", "dynamodb:DeleteItem", "dynamodb:BatchWriteItem"} & actions


@pytest.mark.parametrize("name", ["fanout", "first_attempt", "push_worker"])
def test_push_functions_may_dead_letter_into_a_queue(template: Template, name: str) -> None:
    """A push given up goes to the subscription's dead-letter queue: the function that gives it up (fan-out
    for a permanent failure, the worker for an exhausted strategy) reads the queue's record in the meta
    table and writes the message to the message table."""
    access = table_access(template, name)
    meta = logical_id(template, "AWS::DynamoDB::Table", "Mns/Tables/Meta/Resource")
    messages = logical_id(template, "AWS::DynamoDB::Table", "Mns/Tables/Messages/Resource")
    assert {"dynamodb:GetItem", "dynamodb:Query"} <= access.get(meta, set())
    assert {"dynamodb:PutItem", "dynamodb:BatchWriteItem"} <= access.get(messages, set())


@pytest.mark.parametrize("name", sorted(ROUTES))
def test_authenticated_routes_may_count_requests_and_nothing_more(template: Template, name: str) -> None:
    """The limits' counters (`mnsd.storage.dynamodb.tables.rates`): UpdateItem on the meta table's `rate#` keys only."""
    meta = logical_id(template, "AWS::DynamoDB::Table", "Mns/Tables/Meta/Resource")
    counting = [
        statement
        for statement in role_statements(template, name)
        if COUNTER_CONDITION in json.dumps(statement.get("Condition", {}))
    ]
    if ROUTES[name].public:
        assert counting == []
        return
    assert len(counting) == 1
    assert counting[0]["Action"] == "dynamodb:UpdateItem"
    assert counting[0]["Resource"] == {"Fn::GetAtt": [meta, "Arn"]}
    assert counting[0]["Condition"] == {"ForAllValues:StringLike": {"dynamodb:LeadingKeys": ["rate#*"]}}


KEYED = {
    "account": ("dynamodb:GetItem", ["*#account"]),  # the account record: `{account}#account`
    "locate": ("dynamodb:BatchGetItem", ["*#G*", "*#D*"]),  # a FIFO group's home: `{queue}#G{group}`, `{queue}#D{d}`
}


@pytest.mark.parametrize("name", sorted(GRANTS))
def test_keyed_grants_name_their_keys_and_one_action(template: Template, name: str) -> None:
    """`meta.account` and `messages.locate` (`infra.grants.ACCESS`): one action, on that table, on keys of that shape;
    a function without them has no such statement."""
    tables = {"meta": "Meta", "messages": "Messages"}
    for kind, (action, keys) in KEYED.items():
        condition = {"ForAllValues:StringLike": {"dynamodb:LeadingKeys": keys}}
        found = [s for s in role_statements(template, name) if s.get("Condition") == condition]
        granted = [g.split(".")[0] for g in GRANTS[name] if g.endswith(f".{kind}")]
        assert len(found) == len(granted)
        for statement, table in zip(found, granted, strict=True):
            arn = logical_id(template, "AWS::DynamoDB::Table", f"Mns/Tables/{tables[table]}/Resource")
            assert (statement["Action"], statement["Resource"]) == (action, {"Fn::GetAtt": [arn, "Arn"]})


def test_only_get_queue_may_read_metrics_and_only_with_get_metric_data(synthesized) -> None:
    stack, template, _ = synthesized
    readers = {
        name
        for name in stack.functions.functions
        if any("cloudwatch:GetMetricData" in json.dumps(s["Action"]) for s in role_statements(template, name))
    }
    assert readers == {name for name, grants in GRANTS.items() if "metrics.read" in grants} == {"get_queue"}
    # Of the API's functions, no other touches CloudWatch (the sampler keeps alarms: tests/infra/test_metrics.py).
    touching = {
        name
        for name in ROUTES
        if any("cloudwatch:" in json.dumps(s["Action"]) for s in role_statements(template, name))
    }
    assert touching == {"get_queue"}
    (statement,) = [s for s in role_statements(template, "get_queue") if "cloudwatch:" in json.dumps(s["Action"])]
    assert (statement["Action"], statement["Resource"], statement["Effect"]) == (
        "cloudwatch:GetMetricData",
        "*",
        "Allow",
    )
    assert "Condition" not in statement


def test_a_read_only_route_cannot_write(template: Template) -> None:
    actions = set().union(*table_access(template, "get_queue").values())
    assert "dynamodb:GetItem" in actions
    assert not {"dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:BatchWriteItem"} & actions


def test_policies_name_specific_resources_and_no_wildcard_actions(template: Template) -> None:
    for name, policy in template.find_resources("AWS::IAM::Policy").items():
        for statement in policy["Properties"]["PolicyDocument"]["Statement"]:
            actions = statement["Action"] if isinstance(statement["Action"], list) else [statement["Action"]]
            assert not any("*" in action for action in actions), (name, actions)
            if "NotResource" in statement:  # SMS: any phone number, no topic
                assert actions == ["sns:Publish"] and ":sns:*:*:*" in json.dumps(statement["NotResource"])
                continue
            resources = statement["Resource"] if isinstance(statement["Resource"], list) else [statement["Resource"]]
            if "*" in resources:
                assert set(actions) <= ANY_RESOURCE_ACTIONS, (name, statement)
    template.resource_count_is("AWS::IAM::ManagedPolicy", 0)
    for name, role in template.find_resources("AWS::IAM::Role").items():
        if role["Metadata"]["aws:cdk:path"].startswith("Mns/Functions/"):
            assert "ManagedPolicyArns" not in role["Properties"], name


def test_tables_are_on_demand_with_pitr_and_ttl(template: Template) -> None:
    tables = template.find_resources("AWS::DynamoDB::Table")
    assert len(tables) == 4
    for table in tables.values():
        assert table["Properties"]["BillingMode"] == "PAY_PER_REQUEST"
        assert table["Properties"]["PointInTimeRecoverySpecification"] == {"PointInTimeRecoveryEnabled": True}
    with_ttl = [t for t in tables.values() if "TimeToLiveSpecification" in t["Properties"]]
    assert len(with_ttl) == 4  # the meta table: its request counters (`mnsd.storage.dynamodb.tables.rates`)
    assert all(t["Properties"]["TimeToLiveSpecification"] == {"AttributeName": "x", "Enabled": True} for t in with_ttl)
    template.has_resource_properties(
        "AWS::DynamoDB::Table",
        {"StreamSpecification": {"StreamViewType": "NEW_AND_OLD_IMAGES"}, "TimeToLiveSpecification": Match.any_value()},
    )


def test_the_message_table_has_the_ready_index_receives_query(template: Template) -> None:
    from local_runtime.tables import READY_INDEX

    messages = template.find_resources(
        "AWS::DynamoDB::Table", {"Properties": {"StreamSpecification": Match.any_value()}}
    )
    (table,) = [t for t in messages.values() if "GlobalSecondaryIndexes" in t["Properties"]]
    (index,) = table["Properties"]["GlobalSecondaryIndexes"]
    assert {k: index[k] for k in ("IndexName", "KeySchema", "Projection")} == {
        k: READY_INDEX[k] for k in ("IndexName", "KeySchema", "Projection")
    }  # as the local runtime and the tests make it
    assert {"AttributeName": "w", "AttributeType": "N"} in table["Properties"]["AttributeDefinitions"]
    statements = [
        statement
        for policy in template.find_resources("AWS::IAM::Policy").values()
        for statement in policy["Properties"]["PolicyDocument"]["Statement"]
        if "dynamodb:Query" in statement["Action"]
    ]
    assert any("/index/*" in json.dumps(statement["Resource"]) for statement in statements)


@pytest.mark.parametrize(("value", "protected"), [(True, True), ("true", True), (False, False), ("false", False)])
def test_deletion_protection_is_a_context_switch(tmp_path: Path, value: object, protected: bool) -> None:
    app = cdk.App(context={**TEST_CONTEXT, "deletionProtection": value}, outdir=str(tmp_path))
    template = Template.from_stack(MnsStack(app, "Mns", env=cdk.Environment(region="us-east-1")))
    for table in template.find_resources("AWS::DynamoDB::Table").values():
        assert table["Properties"]["DeletionProtectionEnabled"] is protected
        assert table["DeletionPolicy"] == ("Retain" if protected else "Delete")


def test_buckets_are_encrypted_private_and_tls_only(template: Template) -> None:
    buckets = template.find_resources("AWS::S3::Bucket")
    assert len(buckets) == 2
    for bucket in buckets.values():
        properties = bucket["Properties"]
        assert properties["BucketEncryption"]["ServerSideEncryptionConfiguration"]
        assert properties["PublicAccessBlockConfiguration"] == {
            "BlockPublicAcls": True,
            "BlockPublicPolicy": True,
            "IgnorePublicAcls": True,
            "RestrictPublicBuckets": True,
        }
    policies = template.find_resources("AWS::S3::BucketPolicy")
    tls_only = {
        policy["Properties"]["Bucket"]["Ref"]
        for policy in policies.values()
        for statement in policy["Properties"]["PolicyDocument"]["Statement"]
        if statement["Effect"] == "Deny" and statement["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}
    }
    assert tls_only == set(buckets)


def test_every_function_logs_to_its_own_group_kept_a_month(template: Template) -> None:
    groups = template.find_resources("AWS::Logs::LogGroup")
    assert all(group["Properties"]["RetentionInDays"] == 30 for group in groups.values())
    used = [
        f["Properties"]["LoggingConfig"]["LogGroup"]["Ref"]
        for f in template.find_resources("AWS::Lambda::Function").values()
    ]
    assert len(set(used)) == len(used) and set(used) < set(groups)


def test_alarms_cover_functions_tables_api_errors_and_dropped_deliveries(synthesized) -> None:
    stack, template, _ = synthesized
    alarms = template.find_resources("AWS::CloudWatch::Alarm")
    metrics = [
        metric["MetricStat"]["Metric"]
        for alarm in alarms.values()
        for metric in alarm["Properties"].get("Metrics", [])
        if "MetricStat" in metric
    ] + [alarm["Properties"] for alarm in alarms.values() if "MetricName" in alarm["Properties"]]
    names = [(m["Namespace"], m["MetricName"]) for m in metrics]
    functions = len(stack.functions.functions)
    assert functions > len(ROUTES)
    assert names.count(("AWS/Lambda", "Errors")) == functions
    assert names.count(("AWS/Lambda", "Throttles")) == functions
    assert names.count(("AWS/DynamoDB", "ReadThrottleEvents")) == 4
    assert names.count(("AWS/DynamoDB", "WriteThrottleEvents")) == 4
    assert ("AWS/ApiGateway", "5xx") in names
    assert ("AWS/SQS", "ApproximateNumberOfMessagesVisible") in names  # the push worker's dead letters
    template.has_resource_properties(
        "AWS::CloudWatch::Alarm",
        {"Namespace": "MNS", "MetricName": "DroppedDeliveries", "Dimensions": [{"Name": "service", "Value": "mns"}]},
    )
    topic = logical_id(template, "AWS::SNS::Topic", "Mns/Alarms/Topic/Resource")
    assert all(alarm["Properties"]["AlarmActions"] == [{"Ref": topic}] for alarm in alarms.values())


def test_access_keys_start_empty_and_never_appear_in_the_template(template: Template) -> None:
    secrets = template.find_resources("AWS::SecretsManager::Secret")
    credentials = logical_id(template, "AWS::SecretsManager::Secret", "Mns/Secrets/Credentials/Resource")
    assert parse_keys(secrets[credentials]["Properties"]["SecretString"]) == {}
    receipt = logical_id(template, "AWS::SecretsManager::Secret", "Mns/Secrets/ReceiptSecret/Resource")
    assert "GenerateSecretString" in secrets[receipt]["Properties"]
    for name, function in template.find_resources("AWS::Lambda::Function").items():
        variables = function["Properties"]["Environment"]["Variables"]
        no_mns_call = (
            "export_tables.handler",
            "signing_setup.handler",
            "console.handler",
            "sample_metrics.handler",
            "snapshot_backlog.handler",
        )
        if function["Properties"]["Handler"] in no_mns_call:
            assert "MNS_CREDENTIALS_SECRET_ARN" not in variables, name  # no MNS call: no keys
        else:
            assert variables["MNS_CREDENTIALS_SECRET_ARN"] == {"Ref": credentials}, name
        assert not {"MNS_CREDENTIALS", "MNS_RECEIPT_SECRET", "MNS_ACCESS_KEY_SECRET", "MNS_SIGNING_KEY"} & set(
            variables
        )


def test_outputs_give_the_endpoint_and_the_credentials_secret(template: Template) -> None:
    outputs = template.find_outputs("*")
    assert {"Endpoint", "CredentialsSecretArn", "DataBucket", "AlarmTopicArn", "DashboardName"} <= set(outputs)


CERTIFICATE = "arn:aws:acm:us-east-1:123456789012:certificate/abc"


@pytest.fixture(scope="module")
def custom_domain(tmp_path_factory: pytest.TempPathFactory) -> Template:
    """The app synthesized with the domain mns.example.com and its certificate."""
    return shared_synth(domainName="mns.example.com", certificateArn=CERTIFICATE).template


def assert_serves_domain(template: Template, name: str) -> None:
    template.has_resource_properties(
        "AWS::ApiGatewayV2::DomainName",
        {"DomainName": name, "DomainNameConfigurations": [Match.object_like({"CertificateArn": CERTIFICATE})]},
    )


def test_a_custom_domain_serves_the_api_at_its_root(custom_domain: Template) -> None:
    template = custom_domain
    assert_serves_domain(template, "mns.example.com")
    mapping = next(iter(template.find_resources("AWS::ApiGatewayV2::ApiMapping").values()))["Properties"]
    assert "ApiMappingKey" not in mapping  # no path prefix: the SDKs refuse one
    assert template.find_outputs("Endpoint")["Endpoint"]["Value"] == "https://mns.example.com"
    assert "DomainTarget" in template.find_outputs("*")


def test_a_custom_domain_also_serves_account_hosts(custom_domain: Template) -> None:
    """`{AccountId}.mns.example.com` names the account whose resources a call is on (sharing across accounts)."""
    template = custom_domain
    assert_serves_domain(template, "*.mns.example.com")
    mappings = template.find_resources("AWS::ApiGatewayV2::ApiMapping")
    assert len(mappings) == 2
    assert all("ApiMappingKey" not in m["Properties"] for m in mappings.values())
    assert "AccountDomainTarget" in template.find_outputs("*")


def test_a_custom_domain_needs_its_certificate(tmp_path: Path) -> None:
    app = cdk.App(context={**TEST_CONTEXT, "domainName": "mns.example.com"}, outdir=str(tmp_path))
    with pytest.raises(ValueError, match="certificateArn"):
        MnsStack(app, "Mns", env=cdk.Environment(region="us-east-1"))


# ---------------------------------------------------------------- push delivery


def function_id(template: Template, name: str) -> str:
    return logical_id(template, "AWS::Lambda::Function", f"Mns/Functions/Fn-{name}/Resource")


def environment(template: Template, name: str) -> dict:
    function = template.find_resources("AWS::Lambda::Function")[function_id(template, name)]
    return function["Properties"]["Environment"]["Variables"]


def test_the_retry_state_machine_is_the_definition_the_local_runtime_executes(template: Template) -> None:
    queue = logical_id(template, "AWS::SQS::Queue", "Mns/Push/PushAttempts/Resource")
    (machine,) = template.find_resources("AWS::StepFunctions::StateMachine").values()
    parts = machine["Properties"]["DefinitionString"]["Fn::Join"][1]
    tokens = [p for p in parts if not isinstance(p, str)]
    assert tokens.count({"Ref": queue}) == 3  # two attempt Tasks and Drop
    assert tokens.count({"Ref": "AWS::Partition"}) == 3  # their service integrations, in the stack's partition
    values = {json.dumps({"Ref": queue}): "QUEUE_URL", json.dumps({"Ref": "AWS::Partition"}): "aws-cn"}
    deployed = json.loads("".join(p if isinstance(p, str) else values[json.dumps(p)] for p in parts))
    assert deployed == definition("QUEUE_URL", partition="aws-cn")
    assert machine["Properties"]["StateMachineType"] == "STANDARD"


def test_fanout_reads_new_topic_messages_and_starts_retry_executions(template: Template) -> None:
    stream = {
        "Fn::GetAtt": [logical_id(template, "AWS::DynamoDB::Table", "Mns/Tables/TopicMessages/Resource"), "StreamArn"]
    }
    template.has_resource_properties(
        "AWS::Lambda::EventSourceMapping",
        {
            "EventSourceArn": stream,
            "FunctionName": {"Ref": function_id(template, "fanout")},
            "FilterCriteria": {"Filters": [{"Pattern": json.dumps({"eventName": ["INSERT"]}, separators=(",", ":"))}]},
            "FunctionResponseTypes": ["ReportBatchItemFailures"],
        },
    )
    machine = logical_id(template, "AWS::StepFunctions::StateMachine", "Mns/Push/Retries/Resource")
    statements = role_statements(template, "fanout")
    assert {"Action": "states:StartExecution", "Effect": "Allow", "Resource": {"Ref": machine}} in statements
    assert environment(template, "fanout")["MNS_PUSH_STATE_MACHINE_ARN"] == {"Ref": machine}


def test_the_worker_takes_the_push_queue_and_answers_task_tokens(template: Template) -> None:
    queue = logical_id(template, "AWS::SQS::Queue", "Mns/Push/PushAttempts/Resource")
    template.has_resource_properties(
        "AWS::Lambda::EventSourceMapping",
        {
            "EventSourceArn": {"Fn::GetAtt": [queue, "Arn"]},
            "FunctionName": {"Ref": function_id(template, "push_worker")},
        },
    )
    actions = {
        action
        for statement in role_statements(template, "push_worker")
        for action in (statement["Action"] if isinstance(statement["Action"], list) else [statement["Action"]])
    }
    assert {"states:SendTaskSuccess", "states:SendTaskFailure", "sqs:ReceiveMessage", "sqs:DeleteMessage"} <= actions
    assert "states:StartExecution" not in actions


def sqs_actions(template: Template, function: str, queue: str) -> set[str]:
    """The SQS actions `function` may perform on the queue of logical id `queue`."""
    return {
        action
        for statement in role_statements(template, function)
        if statement.get("Resource") == {"Fn::GetAtt": [queue, "Arn"]}
        for action in (statement["Action"] if isinstance(statement["Action"], list) else [statement["Action"]])
        if action.startswith("sqs:")
    }


def test_first_attempts_go_through_a_fifo_queue_deduplicated_per_delivery(template: Template) -> None:
    queue_id = logical_id(template, "AWS::SQS::Queue", "Mns/Push/FirstAttempts/Resource")
    dead_letters = logical_id(template, "AWS::SQS::Queue", "Mns/Push/FirstAttemptDeadLetters/Resource")
    queues = template.find_resources("AWS::SQS::Queue")
    queue = queues[queue_id]["Properties"]
    assert queue["FifoQueue"] is True and queue.get("ContentBasedDeduplication", False) is False
    assert queue["DeduplicationScope"] == "messageGroup" and queue["FifoThroughputLimit"] == "perMessageGroupId"
    assert queue["RedrivePolicy"] == {
        "deadLetterTargetArn": {"Fn::GetAtt": [dead_letters, "Arn"]},
        "maxReceiveCount": 5,
    }
    assert queues[dead_letters]["Properties"]["FifoQueue"] is True
    first_attempt = functions_by_name(template)["first_attempt"]
    assert queue["VisibilityTimeout"] >= 6 * first_attempt["Timeout"]
    assert first_attempt["Timeout"] > 2 * 5  # a batch's attempts run concurrently, each at most 5 s
    for name in ("fanout", "first_attempt"):
        assert environment(template, name)["MNS_FIRST_ATTEMPT_QUEUE_URL"] == {"Ref": queue_id}
    assert "MNS_FIRST_ATTEMPT_QUEUE_URL" not in environment(template, "push_worker")


def test_the_first_attempt_function_consumes_the_fifo_queue_and_the_fanout_only_sends_to_it(
    template: Template,
) -> None:
    queue = logical_id(template, "AWS::SQS::Queue", "Mns/Push/FirstAttempts/Resource")
    (mapping,) = template.find_resources(
        "AWS::Lambda::EventSourceMapping",
        {"Properties": {"FunctionName": {"Ref": function_id(template, "first_attempt")}}},
    ).values()
    properties = mapping["Properties"]
    assert properties["EventSourceArn"] == {"Fn::GetAtt": [queue, "Arn"]}
    assert properties["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    assert 1 <= properties["BatchSize"] <= 10  # FIFO's limit
    assert properties["ScalingConfig"] == {"MaximumConcurrency": Capacity().first_attempt_concurrency}
    assert sqs_actions(template, "fanout", queue) == {"sqs:SendMessage"}
    consumer = sqs_actions(template, "first_attempt", queue)
    assert {"sqs:ReceiveMessage", "sqs:DeleteMessage"} <= consumer and "sqs:SendMessage" not in consumer
    assert sqs_actions(template, "push_worker", queue) == set()
    machine = logical_id(template, "AWS::StepFunctions::StateMachine", "Mns/Push/Retries/Resource")
    statements = role_statements(template, "first_attempt")
    assert {"Action": "states:StartExecution", "Effect": "Allow", "Resource": {"Ref": machine}} in statements
    assert not any("states:SendTaskSuccess" in s["Action"] for s in statements)


def test_a_first_attempt_that_keeps_failing_raises_an_alarm(template: Template) -> None:
    dead_letters = logical_id(template, "AWS::SQS::Queue", "Mns/Push/FirstAttemptDeadLetters/Resource")
    assert_alarms_on_waiting_messages(template, dead_letters)


def test_pushes_are_signed_with_the_deploy_time_key_whose_certificate_the_api_serves(template: Template) -> None:
    key = logical_id(template, "AWS::SecretsManager::Secret", "Mns/SigningKey/Key/Resource")
    (material_id, material), *others = template.find_resources("Custom::PushSigningKey").items()
    assert not others
    assert material["Properties"]["ServiceToken"] == {"Fn::GetAtt": [function_id(template, "signing_setup"), "Arn"]}
    assert material["Properties"]["SecretArn"] == {"Ref": key}
    certificate = environment(template, "get_signing_certificate")["MNS_SIGNING_CERTIFICATE"]
    assert certificate == {"Fn::GetAtt": [material_id, "Certificate"]}
    for name in ("fanout", "first_attempt", "push_worker"):
        variables = environment(template, name)
        assert variables["MNS_SIGNING_KEY_SECRET_ARN"] == {"Ref": key}
        url = json.dumps(variables["MNS_SIGNING_CERT_URL"])
        assert (
            CERTIFICATE_PATH in url
            and logical_id(template, "AWS::ApiGatewayV2::Api", "Mns/Api/HttpApi/Resource") in url
        )
    readers = [
        name
        for name in DECLARED_GRANTS
        if any(statement.get("Resource") == {"Ref": key} for statement in role_statements(template, name))
    ]
    assert sorted(readers) == ["fanout", "first_attempt", "push_worker", "signing_setup"]


# ---------------------------------------------------------------- operation log, exports, analytics


def test_the_operation_log_is_fed_only_by_leases_of_logging_queues(template: Template) -> None:
    messages = logical_id(template, "AWS::DynamoDB::Table", "Mns/Tables/Messages/Resource")
    mapping = template.find_resources(
        "AWS::Lambda::EventSourceMapping", {"Properties": {"FunctionName": {"Ref": function_id(template, "oplog")}}}
    )
    (properties,) = [m["Properties"] for m in mapping.values()]
    assert properties["EventSourceArn"] == {"Fn::GetAtt": [messages, "StreamArn"]}
    patterns = [json.loads(f["Pattern"]) for f in properties["FilterCriteria"]["Filters"]]
    assert patterns == [
        {"dynamodb": {"NewImage": {"l": {"BOOL": [True]}}}},
        {"dynamodb": {"OldImage": {"l": {"BOOL": [True]}}}},
    ]


def exports_of(template: Template) -> tuple[dict, dict[str, str]]:
    """The 02:00 rule, and the tables by label `export_tables` exports."""
    (rule,) = template.find_resources(
        "AWS::Events::Rule", {"Properties": {"ScheduleExpression": "cron(0 2 * * ? *)"}}
    ).values()
    tables = {
        label: logical_id(template, "AWS::DynamoDB::Table", f"Mns/Tables/{construct}/Resource")
        for label, construct in (("log", "Log"), ("messages", "Messages"), ("meta", "Meta"))
    }
    exported = json.dumps(environment(template, "export_tables")["MNS_EXPORT_TABLES"])
    (export,) = [
        s for s in role_statements(template, "export_tables") if s["Action"] == "dynamodb:ExportTableToPointInTime"
    ]
    labelled = {label: table for label, table in tables.items() if f"{label}=" in exported and table in exported}
    resources = export["Resource"] if isinstance(export["Resource"], list) else [export["Resource"]]
    assert resources == [{"Fn::GetAtt": [table, "Arn"]} for table in labelled.values()]
    return rule, labelled


def test_the_log_is_exported_daily_and_each_queues_counts_snapshotted_beside(template: Template) -> None:
    rule, exported = exports_of(template)
    assert sorted(exported) == ["log"]  # the message table is not exported: the snapshot reads each queue's counts
    targets = [target["Arn"] for target in rule["Properties"]["Targets"]]
    assert targets == [
        {"Fn::GetAtt": [function_id(template, "export_tables"), "Arn"]},
        {"Fn::GetAtt": [function_id(template, "snapshot_backlog"), "Arn"]},
    ]
    variables = environment(template, "snapshot_backlog")
    assert variables["MNS_SNAPSHOT_PREFIX"] == "exports/backlog"
    data = logical_id(template, "AWS::S3::Bucket", "Mns/Buckets/Data/Resource")
    assert variables["MNS_SNAPSHOT_BUCKET"] == {"Ref": data}
    writes = [s for s in role_statements(template, "snapshot_backlog") if "s3:" in json.dumps(s["Action"])]
    assert [s["Action"] for s in writes] == ["s3:PutObject"]
    assert json.dumps(writes[0]["Resource"]).endswith('/exports/backlog/*"]]}')
    meta = logical_id(template, "AWS::DynamoDB::Table", "Mns/Tables/Meta/Resource")
    messages = logical_id(template, "AWS::DynamoDB::Table", "Mns/Tables/Messages/Resource")
    assert set(table_access(template, "snapshot_backlog")) == {meta, messages}
    assert GRANTS["snapshot_backlog"] == ("meta.read", "messages.read")
    (job,) = [
        j["Properties"]
        for j in template.find_resources("AWS::Glue::Job").values()
        if j["Properties"]["Name"] == "Mns-backlog_snapshot"
    ]
    assert {k for k in job["DefaultArguments"] if k.endswith("_export")} == {"--backlog_export"}
    assert "/exports/backlog" in json.dumps(job["DefaultArguments"]["--backlog_export"])


def test_the_backlog_from_full_exports_of_the_message_and_meta_tables_is_a_choice(tmp_path: Path) -> None:
    stack, template = synth(tmp_path, backlogSnapshot="export")  # cdk-nag clean, or the synth fails
    assert findings(tmp_path / "Mns.template.json") == []  # cfn-lint
    rule, exported = exports_of(template)
    assert sorted(exported) == ["log", "messages", "meta"]
    assert rule["Properties"]["Targets"][0]["Arn"] == {"Fn::GetAtt": [function_id(template, "export_tables"), "Arn"]}
    assert len(rule["Properties"]["Targets"]) == 1 and stack.backlog_snapshots is None
    assert not template.find_resources("AWS::Lambda::Function", {"Properties": {"Handler": "snapshot_backlog.handler"}})
    (job,) = [
        j["Properties"]
        for j in template.find_resources("AWS::Glue::Job").values()
        if j["Properties"]["Name"] == "Mns-backlog_snapshot"
    ]
    assert {k for k in job["DefaultArguments"] if k.endswith("_export")} == {"--messages_export", "--meta_export"}
    with pytest.raises(ValueError, match="backlogSnapshot"):
        synth(tmp_path / "bad", backlogSnapshot="incremental")


def test_the_glue_jobs_run_on_glue_5_1_every_day_after_the_exports(template: Template) -> None:
    jobs = template.find_resources("AWS::Glue::Job")
    assert sorted(job["Properties"]["Name"] for job in jobs.values()) == [f"Mns-{job}" for job in sorted(JOB_INPUTS)]
    assert all(job["Properties"]["GlueVersion"] == "5.1" for job in jobs.values())
    data = logical_id(template, "AWS::S3::Bucket", "Mns/Buckets/Data/Resource")
    for job in jobs.values():
        arguments = json.dumps(job["Properties"]["DefaultArguments"])
        assert data in arguments and "/exports/" in arguments and "/analytics/" in arguments
        assert job["Properties"]["DefaultArguments"]["--log_ttl_hours"] == "168"
    assert {job["Properties"]["DefaultArguments"]["--custom-logGroup-prefix"] for job in jobs.values()} == {
        "/aws-glue/Mns"
    }
    groups = template.find_resources("AWS::Logs::LogGroup", {"Properties": {"RetentionInDays": 30}})
    names = {group["Properties"].get("LogGroupName"): name for name, group in groups.items()}
    job_logs = {names["/aws-glue/Mns/output"], names["/aws-glue/Mns/error"]}
    role = logical_id(template, "AWS::IAM::Role", "Mns/Analytics/JobRole/Resource")
    (policy,) = template.find_resources("AWS::IAM::Policy", {"Properties": {"Roles": [{"Ref": role}]}}).values()
    written = {
        s["Resource"]["Fn::GetAtt"][0]
        for s in policy["Properties"]["PolicyDocument"]["Statement"]
        if "logs:PutLogEvents" in s["Action"]
    }
    assert written == job_logs
    (trigger,) = template.find_resources("AWS::Glue::Trigger").values()
    assert trigger["Properties"]["Schedule"] == "cron(0 3 * * ? *)"
    assert trigger["Properties"]["StartOnCreation"] is True
    assert len(trigger["Properties"]["Actions"]) == len(jobs)


# ---------------------------------------------------------------- ready for a first deploy


def functions_by_name(template: Template) -> dict[str, dict]:
    return {
        resource["Properties"]["Handler"].removesuffix(".handler"): resource["Properties"]
        for resource in template.find_resources("AWS::Lambda::Function").values()
    }


def test_long_polls_are_capped_so_they_cannot_starve_the_other_functions(template: Template) -> None:
    capacity = Capacity()
    functions = functions_by_name(template)
    reserved = {
        name: f["ReservedConcurrentExecutions"] for name, f in functions.items() if "ReservedConcurrentExecutions" in f
    }
    assert reserved == {
        "get_messages": capacity.receive_concurrency,
        "fanout": capacity.fanout_concurrency,
        "first_attempt": capacity.first_attempt_concurrency,
        "push_worker": capacity.push_concurrency,
    }
    # Sends, deletes and the control plane share the rest, which a default account (1,000) keeps >= 100.
    assert capacity.account_concurrency - sum(reserved.values()) >= MIN_UNRESERVED
    assert functions["get_messages"]["MemorySize"] == capacity.receive_memory


def test_capacity_comes_from_the_context(tmp_path: Path) -> None:
    _, template = synth(tmp_path, receiveConcurrency="300", pushConcurrency=5, receiveMemory=128)
    functions = functions_by_name(template)
    assert functions["get_messages"]["ReservedConcurrentExecutions"] == 300
    assert functions["get_messages"]["MemorySize"] == 128
    assert functions["push_worker"]["ReservedConcurrentExecutions"] == 5
    worker = function_id(template, "push_worker")
    (mapping,) = template.find_resources(
        "AWS::Lambda::EventSourceMapping", {"Properties": {"FunctionName": {"Ref": worker}}}
    ).values()
    assert mapping["Properties"]["ScalingConfig"] == {"MaximumConcurrency": 5}


@pytest.mark.parametrize("context", [{"accountConcurrency": "10"}, {"reservedConcurrency": "false"}])
def test_a_deploy_without_reservations_reserves_nothing_and_keeps_the_push_queue_bounded(
    tmp_path: Path, context: dict[str, str]
) -> None:
    """A new account (quota 10) deploys: no function reserves concurrency (cdk-nag and the synth still pass)."""
    _, template = synth(tmp_path, **context)
    functions = functions_by_name(template)
    assert [name for name, f in functions.items() if "ReservedConcurrentExecutions" in f] == []
    worker = function_id(template, "push_worker")
    (mapping,) = template.find_resources(
        "AWS::Lambda::EventSourceMapping", {"Properties": {"FunctionName": {"Ref": worker}}}
    ).values()
    assert mapping["Properties"]["ScalingConfig"] == {"MaximumConcurrency": Capacity().push_concurrency}
    assert functions["get_messages"]["Timeout"] == 30  # long polls still end inside API Gateway's 30 s


def test_a_stream_batch_that_keeps_failing_reaches_an_alarmed_failure_queue(template: Template) -> None:
    failures = logical_id(template, "AWS::SQS::Queue", "Mns/Push/FanoutFailures/Resource")
    fanout = function_id(template, "fanout")
    (mapping,) = template.find_resources(
        "AWS::Lambda::EventSourceMapping", {"Properties": {"FunctionName": {"Ref": fanout}}}
    ).values()
    properties = mapping["Properties"]
    assert properties["ParallelizationFactor"] == Capacity().fanout_parallelization > 1
    assert properties["BisectBatchOnFunctionError"] is True
    assert properties["MaximumRetryAttempts"] == 3
    assert properties["MaximumRecordAgeInSeconds"] == 3600
    assert properties["DestinationConfig"] == {"OnFailure": {"Destination": {"Fn::GetAtt": [failures, "Arn"]}}}
    assert any(
        "sqs:SendMessage" in s["Action"] and s["Resource"] == {"Fn::GetAtt": [failures, "Arn"]}
        for s in role_statements(template, "fanout")
    )
    assert_alarms_on_waiting_messages(template, failures)


def test_the_push_queue_visibility_is_six_times_the_worker_timeout(template: Template) -> None:
    queue = template.find_resources("AWS::SQS::Queue")[
        logical_id(template, "AWS::SQS::Queue", "Mns/Push/PushAttempts/Resource")
    ]
    worker = functions_by_name(template)["push_worker"]
    assert queue["Properties"]["VisibilityTimeout"] >= 6 * worker["Timeout"]


def test_task_token_answers_are_allowed_as_aws_documents_them(template: Template) -> None:
    (statement,) = [s for s in role_statements(template, "push_worker") if "states:SendTaskSuccess" in s["Action"]]
    assert sorted(statement["Action"]) == [
        "states:SendTaskFailure",
        "states:SendTaskHeartbeat",
        "states:SendTaskSuccess",
    ]
    assert statement["Resource"] == "*"  # no resource type: a state machine ARN here would never match


def test_the_signing_custom_resource_can_read_its_secret_and_has_a_timeout(template: Template) -> None:
    key = logical_id(template, "AWS::SecretsManager::Secret", "Mns/SigningKey/Key/Resource")
    reads = [
        s for s in role_statements(template, "signing_setup")
        if "secretsmanager:GetSecretValue" in s["Action"] and s["Resource"] == {"Ref": key}
    ]  # fmt: skip
    assert reads
    (material,) = template.find_resources("Custom::PushSigningKey").values()
    timeout = material["Properties"]["ServiceTimeout"]
    assert functions_by_name(template)["signing_setup"]["Timeout"] < int(timeout) < 3600


def test_glue_jobs_may_open_the_default_database_and_their_own(template: Template) -> None:
    role = logical_id(template, "AWS::IAM::Role", "Mns/Analytics/JobRole/Resource")
    (policy,) = template.find_resources("AWS::IAM::Policy", {"Properties": {"Roles": [{"Ref": role}]}}).values()
    statements = policy["Properties"]["PolicyDocument"]["Statement"]
    reads = [s for s in statements if "glue:GetDatabase" in s["Action"]]
    resources = json.dumps([s["Resource"] for s in reads])
    for resource in (":catalog", ":database/default", f":database/{DATABASE}"):
        assert f'"{resource}"' in resources, resource
    writes = [s for s in statements if "glue:CreateTable" in s["Action"]]
    assert "database/default" not in json.dumps(writes)  # nothing is written outside the stack's database


def test_a_failed_glue_job_notifies_the_alarm_topic(template: Template) -> None:
    topic = logical_id(template, "AWS::SNS::Topic", "Mns/Alarms/Topic/Resource")
    rules = template.find_resources("AWS::Events::Rule", {"Properties": {"EventPattern": {"source": ["aws.glue"]}}})
    (rule,) = rules.values()
    pattern = rule["Properties"]["EventPattern"]
    assert pattern["detail-type"] == ["Glue Job State Change"]
    assert sorted(pattern["detail"]["state"]) == ["ERROR", "FAILED", "TIMEOUT"]
    assert sorted(pattern["detail"]["jobName"]) == [f"Mns-{job}" for job in sorted(JOB_INPUTS)]
    assert rule["Properties"]["Targets"][0]["Arn"] == {"Ref": topic}
    policies = template.find_resources("AWS::SNS::TopicPolicy")
    assert "events.amazonaws.com" in json.dumps(policies)


def test_the_powertools_layer_is_the_version_the_tests_pin(template: Template) -> None:
    pinned = pinned_version("aws-lambda-powertools")
    assert pinned == "3.37.0"
    parameters = {
        name: p["Default"] for name, p in template.to_json()["Parameters"].items() if "powertools" in p["Default"]
    }
    assert parameters == {next(iter(parameters)): f"/aws/service/powertools/python/arm64/python3.13/{pinned}"}
    (parameter,) = parameters
    for name, function in functions_by_name(template).items():
        assert {"Ref": parameter} in function["Layers"], name


SOURCES = [ROOT / "app.py", *(ROOT / "infra").rglob("*.py"), *(ROOT / "functions").rglob("*.py")]
DEPLOYED_CODE = list((ROOT / "layers/mnsd/python").rglob("*.py"))


def test_no_arn_names_the_commercial_partition(template: Template) -> None:
    assert "arn:aws:" not in json.dumps(template.to_json())  # China and GovCloud have their own partitions
    assert [str(p) for p in SOURCES + DEPLOYED_CODE if "arn:aws:" in p.read_text()] == []


def test_the_template_stays_well_within_cloudformation_limits(template: Template) -> None:
    resources = template.to_json()["Resources"]
    # CloudFormation allows 500 per stack; a route's function costs 9 (function, role, policy, log group, two alarms,
    # route, integration, permission): 306 with the receivers' four routes.
    assert len(resources) <= 350
    assert len(template.to_json().get("Parameters", {})) <= 200


@pytest.mark.parametrize("function", ["get_messages", "put_queue", "delete_messages"])
def test_dead_letter_moves_rewind_and_redrive_are_granted_on_the_message_table(template: Template, function) -> None:
    """A dead-letter move (receive, redrive) is a TransactWriteItems of a conditional Delete and Puts, which
    IAM authorizes by those actions; rewind and its switch-off (PUT /queues/{q}) update, query and delete
    leases; a delete with rewind on updates the lease in place."""
    messages = logical_id(template, "AWS::DynamoDB::Table", "Mns/Tables/Messages/Resource")
    needed = {
        "get_messages": {"dynamodb:Query", "dynamodb:BatchGetItem", "dynamodb:DeleteItem", "dynamodb:PutItem"},
        "put_queue": {"dynamodb:Query", "dynamodb:BatchGetItem", "dynamodb:DeleteItem", "dynamodb:PutItem"}
        | {"dynamodb:UpdateItem"},
        "delete_messages": {"dynamodb:UpdateItem", "dynamodb:DeleteItem"},
    }[function]
    assert needed <= table_access(template, function).get(messages, set())


def test_without_the_wait_tier_flag_the_template_has_no_trace_of_it(template: Template) -> None:
    # (Its template was compared with the one before the tier existed: identical but for code asset hashes.)
    for kind in ("AWS::ECS::Service", "AWS::EC2::VPC", "AWS::ApiGatewayV2::VpcLink", "AWS::Lambda::Url"):
        template.resource_count_is(kind, 0)
    text = json.dumps(template.to_json())
    assert "WaitTier" not in text and "MNS_WAIT_TIER" not in text and "MNS_WAIT_TIER_KEY" not in text
