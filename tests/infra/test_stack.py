"""The synthesized template: one function per route from the route table, tables with TTL."""

import aws_cdk as cdk
import pytest
from aws_cdk.assertions import Match, Template

from infra.stack import MnsStack
from mnsd.routes import ROUTES


@pytest.fixture(scope="module")
def template() -> Template:
    app = cdk.App(context={"mnsRegion": "cn-hangzhou", "powertoolsLayerVersion": 27})
    return Template.from_stack(MnsStack(app, "Test", env=cdk.Environment(region="us-east-1")))


def test_every_route_has_its_own_function_and_route(template: Template) -> None:
    functions = template.find_resources("AWS::Lambda::Function", {"Properties": {"Runtime": "python3.11"}})
    handlers = sorted(f["Properties"]["Handler"] for f in functions.values())
    assert handlers == sorted(f"{name}.handler" for name in [*ROUTES, "not_found"])
    route_keys = {r["Properties"]["RouteKey"] for r in template.find_resources("AWS::ApiGatewayV2::Route").values()}
    assert route_keys == {f"{r.method} {r.path}" for r in ROUTES.values()} | {"$default"}


def test_api_sits_at_the_root_with_a_default_stage(template: Template) -> None:
    template.has_resource_properties("AWS::ApiGatewayV2::Stage", {"StageName": "$default", "AutoDeploy": True})


def test_message_table_expires_items_by_ttl(template: Template) -> None:
    template.has_resource_properties(
        "AWS::DynamoDB::Table",
        {"TimeToLiveSpecification": {"AttributeName": "x", "Enabled": True}, "BillingMode": "PAY_PER_REQUEST"},
    )


def test_long_polls_get_the_full_integration_timeout(template: Template) -> None:
    template.has_resource_properties("AWS::Lambda::Function", {"Handler": "get_messages.handler", "Timeout": 30})


def test_secrets_come_from_secrets_manager_not_the_template(template: Template) -> None:
    template.has_resource_properties(
        "AWS::Lambda::Function",
        {
            "Handler": "post_messages.handler",
            "Environment": {
                "Variables": Match.object_like(
                    {"MNS_RECEIPT_SECRET_ARN": Match.any_value(), "MNS_CREDENTIALS_SECRET_ARN": Match.any_value()}
                )
            },
        },
    )
