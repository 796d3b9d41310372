"""The console's function and routes, synthesized alone: GET routes only, the `console` package as code,
and a role that may write its own log group (and X-Ray traces, as every function) and nothing else."""

import json
import subprocess
import sys

import aws_cdk as cdk
import pytest
from aws_cdk import aws_apigatewayv2 as apigw
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk.assertions import Template

from infra.console import CONSOLE_SOURCE, ROUTE_KEYS, Console, PackageBundling
from infra.functions import Functions

TRACING_ACTIONS = {
    "xray:PutTraceSegments",
    "xray:PutTelemetryRecords",
    "xray:GetSamplingRules",
    "xray:GetSamplingTargets",
}
LOG_ACTIONS = {"logs:CreateLogStream", "logs:PutLogEvents"}


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Template:
    outdir = tmp_path_factory.mktemp("cdk.out")
    app = cdk.App(context={"aws:cdk:bundling-stacks": [], "aws:cdk:enable-path-metadata": True}, outdir=str(outdir))
    stack = cdk.Stack(app, "Test", env=cdk.Environment(region="us-east-1"))
    meta = dynamodb.Table(
        stack, "Meta", partition_key=dynamodb.Attribute(name="pk", type=dynamodb.AttributeType.STRING)
    )
    functions = Functions(stack, "Functions", tables={"meta": meta}, environment={})
    functions.add("get_queue", grants=("meta.read",))  # an API function, to compare with
    http_api = apigw.HttpApi(stack, "HttpApi")
    Console(stack, "Console", functions=functions, http_api=http_api)
    return Template.from_stack(stack)


def _function(template: Template, handler: str) -> tuple[str, dict]:
    found = template.find_resources("AWS::Lambda::Function", {"Properties": {"Handler": handler}})
    assert len(found) == 1, found
    return next(iter(found.items()))


def test_the_console_routes_are_get_only_and_reach_the_console_function(template: Template) -> None:
    routes = template.find_resources("AWS::ApiGatewayV2::Route")
    keys = {route["Properties"]["RouteKey"] for route in routes.values()}
    assert keys == ROUTE_KEYS == {"GET /console", "GET /console/{proxy+}"}
    console, _ = _function(template, "console.handler")
    integrations = template.find_resources("AWS::ApiGatewayV2::Integration")
    for route in routes.values():
        integration = route["Properties"]["Target"]["Fn::Join"][1][1]["Ref"]
        uri = integrations[integration]["Properties"]["IntegrationUri"]
        assert uri == {"Fn::GetAtt": [console, "Arn"]}


def test_the_console_code_is_its_own_asset_not_the_api_functions(template: Template) -> None:
    _, console = _function(template, "console.handler")
    _, api = _function(template, "get_queue.handler")
    assert console["Properties"]["Code"]["S3Key"] != api["Properties"]["Code"]["S3Key"]


def test_the_console_role_writes_its_own_logs_and_nothing_more(template: Template) -> None:
    console, function = _function(template, "console.handler")
    role = function["Properties"]["Role"]["Fn::GetAtt"][0]
    assert "ManagedPolicyArns" not in template.find_resources("AWS::IAM::Role")[role]["Properties"]
    policies = template.find_resources("AWS::IAM::Policy", {"Properties": {"Roles": [{"Ref": role}]}})
    assert len(policies) == 1
    (policy,) = policies.values()
    log_group = function["Properties"]["LoggingConfig"]["LogGroup"]["Ref"]
    statements = policy["Properties"]["PolicyDocument"]["Statement"]
    assert any(LOG_ACTIONS <= set(statement["Action"]) for statement in statements)
    for statement in statements:
        actions = statement["Action"] if isinstance(statement["Action"], list) else [statement["Action"]]
        assert set(actions) <= TRACING_ACTIONS | LOG_ACTIONS, actions
        if set(actions) & LOG_ACTIONS:
            assert statement["Resource"] == {"Fn::GetAtt": [log_group, "Arn"]}
        else:
            assert statement["Resource"] == "*"
    assert "MNS_CREDENTIALS_SECRET_ARN" not in function["Properties"]["Environment"]["Variables"]


def test_the_bundled_asset_serves_the_console_from_the_package_alone(tmp_path, monkeypatch) -> None:
    PackageBundling(CONSOLE_SOURCE).try_bundle(str(tmp_path))
    assert (tmp_path / "console" / "static" / "index.html").is_file()
    assert not list(tmp_path.rglob("__pycache__"))
    code = (
        "import console, json; "
        "r = console.handler({'rawPath': '/console/app.js'}, None); "
        "print(json.dumps([r['statusCode'], r['headers']['Content-Type'], console.__file__]))"
    )
    run = subprocess.run([sys.executable, "-S", "-c", code], cwd=tmp_path, capture_output=True, text=True, check=True)
    status, content_type, location = json.loads(run.stdout)
    assert (status, content_type) == (200, "text/javascript; charset=utf-8")
    assert location.startswith(str(tmp_path))  # the bundle's package (no site-packages: -S), as on Lambda
