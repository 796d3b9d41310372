"""The function factory refuses grants it cannot honour exactly."""

import aws_cdk as cdk
import pytest
from aws_cdk import aws_dynamodb as dynamodb

from infra.functions import Functions


@pytest.fixture
def functions(tmp_path) -> Functions:
    app = cdk.App(context={"aws:cdk:bundling-stacks": []}, outdir=str(tmp_path))
    stack = cdk.Stack(app, "Test", env=cdk.Environment(region="us-east-1"))
    meta = dynamodb.Table(
        stack, "Meta", partition_key=dynamodb.Attribute(name="pk", type=dynamodb.AttributeType.STRING)
    )
    return Functions(stack, "Functions", tables={"meta": meta}, environment={}, powertools_version="3.37.0")


@pytest.mark.parametrize("grant", ["topic_messages.read", "meta.delete", "meta"])
def test_a_grant_on_an_unknown_table_or_access_is_refused(functions: Functions, grant: str) -> None:
    with pytest.raises(ValueError, match="unknown grant"):
        functions.add("get_queue", grants=(grant,))


def test_a_known_grant_is_accepted(functions: Functions) -> None:
    functions.add("get_queue", grants=("meta.read",))
    assert list(functions.functions) == ["get_queue"]
