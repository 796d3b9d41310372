"""The template with the wait tier (`-c waitTier=grip`, infra/wait_tier.py): cdk-nag and cfn-lint clean, the receive,
send and delete routes through a VPC link to two arm64 Fargate tasks deployed rolling, which ask each route's own
function by its URL; wakes on an IAM route only the functions may call, the tier's key readable by those three
functions and the tasks only. (Without the flag the template has no trace of it: tests/infra/test_stack.py.)"""

import json
from pathlib import Path

import pytest
from aws_cdk.assertions import Match, Template

from infra.lint import findings
from infra.stack import MnsStack
from infra.wait_tier import CPU_TARGET_PERCENT, HEALTH_PROBE, HOLD_PORT, MAX_TASKS, TASKS, WAKE_PATH, enabled
from mnsd.ground import settings
from mnsd.waiting.contract import READY_PATH
from tests.support.stack import logical_id, role_statements
from tests.support.stack import synthesized as shared_synth

# The routes through the tier: receive (and peek), send (and batch send), delete (and batch delete); each asks its own
# function, by the method the tier's origins are named with (`wait_tier.__main__`).
TIER_ROUTES = {
    "GET /queues/{queue}/messages": ("get_messages", "WAIT_TIER_ORIGIN"),
    "POST /queues/{queue}/messages": ("post_messages", "WAIT_TIER_ORIGIN_POST"),
    "DELETE /queues/{queue}/messages": ("delete_messages", "WAIT_TIER_ORIGIN_DELETE"),
}


@pytest.fixture(scope="module")
def synthesized() -> tuple[MnsStack, Template, Path]:
    return shared_synth(waitTier="grip")


@pytest.fixture(scope="module")
def template(synthesized: tuple[MnsStack, Template, Path]) -> Template:
    return synthesized[1]


def test_with_the_tier_synth_passes_cdk_nag_and_cfn_lint(synthesized: tuple[MnsStack, Template, Path]) -> None:
    _, _, outdir = synthesized  # (the synth itself fails on an unreviewed cdk-nag finding)
    assert findings(outdir / "Mns.template.json") == []


def test_the_flag_takes_grip_or_off_and_nothing_else() -> None:
    assert enabled("grip") and enabled(" GRIP ")
    assert not enabled(None) and not enabled("") and not enabled("off")
    with pytest.raises(ValueError):
        enabled("pushpin")


def test_two_arm64_fargate_tasks_deploy_rolling_and_roll_back(template: Template) -> None:
    template.has_resource_properties(
        "AWS::ECS::Service",
        {
            "LaunchType": "FARGATE",
            "DesiredCount": TASKS,
            "DeploymentConfiguration": Match.object_like(
                {
                    "MinimumHealthyPercent": 100,
                    "MaximumPercent": 200,
                    "DeploymentCircuitBreaker": {"Enable": True, "Rollback": True},
                }
            ),
        },
    )
    template.has_resource_properties(
        "AWS::ECS::TaskDefinition",
        {"RuntimePlatform": {"CpuArchitecture": "ARM64", "OperatingSystemFamily": "LINUX"}, "Cpu": "256"},
    )
    template.resource_count_is("AWS::EC2::NatGateway", 0)


def test_the_receive_send_and_delete_routes_go_through_the_vpc_link_and_every_other_route_to_its_function(
    template: Template,
) -> None:
    routes = template.find_resources("AWS::ApiGatewayV2::Route")
    integrations = template.find_resources("AWS::ApiGatewayV2::Integration")
    by_key = {r["Properties"]["RouteKey"]: r["Properties"] for r in routes.values()}

    def integration(key: str) -> dict:
        return integrations[by_key[key]["Target"]["Fn::Join"][1][1]["Ref"]]["Properties"]

    for key in TIER_ROUTES:
        assert (integration(key)["IntegrationType"], integration(key)["ConnectionType"]) == ("HTTP_PROXY", "VPC_LINK")
    assert len({json.dumps(by_key[key]["Target"]) for key in TIER_ROUTES}) == 1  # (one integration: the tasks)
    wake = by_key[f"POST {WAKE_PATH}"]
    assert wake["AuthorizationType"] == "AWS_IAM"
    others = [key for key in by_key if key not in (*TIER_ROUTES, f"POST {WAKE_PATH}")]
    assert "PUT /queues/{queue}/messages" in others  # (ChangeMessageVisibility: its function, as without the tier)
    for key in others:
        assert integration(key)["IntegrationType"] == "AWS_PROXY", key


def function_of(template: Template, name: str) -> tuple[str, dict]:
    """The logical id and properties of the function of route `name`."""
    return next(
        (logical, f["Properties"]) for logical, f in template.find_resources("AWS::Lambda::Function").items()
        if f["Properties"]["Handler"] == f"{name}.handler"
    )  # fmt: skip


def test_the_tier_asks_each_routes_own_function_by_its_url(template: Template) -> None:
    urls = template.find_resources("AWS::Lambda::Url")
    by_function = {u["Properties"]["TargetFunctionArn"]["Fn::GetAtt"][0]: (logical, u["Properties"])
                   for logical, u in urls.items()}  # fmt: skip
    assert len(urls) == len(TIER_ROUTES)  # no other function has a URL
    (container,) = template.find_resources("AWS::ECS::TaskDefinition").values()
    (tier,) = container["Properties"]["ContainerDefinitions"]
    environment = {v["Name"]: v["Value"] for v in tier["Environment"]}
    for name, variable in TIER_ROUTES.values():
        logical, _ = function_of(template, name)
        url, properties = by_function[logical]
        assert properties["AuthType"] == "NONE"  # (the tier's signature and each client's MNS signature are checked)
        assert environment[variable] == {"Fn::GetAtt": [url, "FunctionUrl"]}, name


def test_the_tasks_are_reached_from_the_vpc_link_only(template: Template) -> None:
    tasks = logical_id(template, "AWS::EC2::SecurityGroup", "Mns/WaitTier/TaskGroup/Resource")
    link = logical_id(template, "AWS::EC2::SecurityGroup", "Mns/WaitTier/LinkGroup/Resource")
    ingress = template.find_resources("AWS::EC2::SecurityGroupIngress", {"Properties": {"GroupId": Match.any_value()}})
    rules = [
        r["Properties"] for r in ingress.values() if r["Properties"]["GroupId"] == {"Fn::GetAtt": [tasks, "GroupId"]}
    ]
    sources = {(r["SourceSecurityGroupId"]["Fn::GetAtt"][0], r["FromPort"]) for r in rules}
    assert (link, HOLD_PORT) in sources
    assert {source for source, _ in sources} <= {link, tasks}  # and the other tasks' wakes
    props = template.find_resources("AWS::EC2::SecurityGroup")[tasks]["Properties"]
    assert "SecurityGroupIngress" not in props  # no open rule


def test_only_the_tiers_route_functions_and_the_tasks_read_the_wait_tier_key(template: Template) -> None:
    key = logical_id(template, "AWS::SecretsManager::Secret", "Mns/WaitTier/GripKey/Resource")
    policies = template.find_resources("AWS::IAM::Policy")
    readers = [
        name
        for name, policy in policies.items()
        if any(
            "secretsmanager:GetSecretValue" in json.dumps(s["Action"]) and key in json.dumps(s.get("Resource"))
            for s in policy["Properties"]["PolicyDocument"]["Statement"]
        )
    ]
    roles = {json.dumps(policies[name]["Properties"]["Roles"]) for name in readers}
    functions = [function_of(template, name)[1] for name, _ in TIER_ROUTES.values()]
    assert len(readers) == len(functions) + 1, roles  # the three functions' roles, the task execution role
    for function in functions:
        role = function["Role"]["Fn::GetAtt"][0]
        assert any(role in json.dumps(policies[name]["Properties"]["Roles"]) for name in readers), role
        assert function["Environment"]["Variables"][settings.WAIT_TIER_KEY_SECRET_ARN] == {"Ref": key}


def test_every_function_may_post_wakes_to_the_wake_route_and_nowhere_else(template: Template) -> None:
    functions = template.find_resources("AWS::Lambda::Function")
    for function in functions.values():
        variables = function["Properties"]["Environment"]["Variables"]
        assert WAKE_PATH in json.dumps(variables[settings.WAIT_TIER_WAKE_URL])
    for name in ("post_messages", "put_messages", "fanout", "put_queue"):
        invokes = [s for s in role_statements(template, name) if s["Action"] == "execute-api:Invoke"]
        assert len(invokes) == 1
        assert json.dumps(invokes[0]["Resource"]).endswith(f'$default/POST{WAKE_PATH}"]]}}')


def test_a_task_is_healthy_when_its_holder_answers_on_the_receive_routes_port(template: Template) -> None:
    assert f":{HOLD_PORT}{READY_PATH}'" in HEALTH_PROBE
    template.has_resource_properties(
        "AWS::ECS::TaskDefinition",
        {
            "ContainerDefinitions": Match.array_with(
                [
                    Match.object_like(
                        {"HealthCheck": Match.object_like({"Command": ["CMD", "python3", "-c", HEALTH_PROBE]})}
                    )
                ]
            )
        },
    )


def test_the_tasks_scale_out_on_cpu_from_two_and_back(template: Template) -> None:
    template.has_resource_properties(
        "AWS::ApplicationAutoScaling::ScalableTarget",
        {"MinCapacity": TASKS, "MaxCapacity": MAX_TASKS, "ScalableDimension": "ecs:service:DesiredCount"},
    )
    template.has_resource_properties(
        "AWS::ApplicationAutoScaling::ScalingPolicy",
        {
            "PolicyType": "TargetTrackingScaling",
            "TargetTrackingScalingPolicyConfiguration": Match.object_like(
                {
                    "TargetValue": CPU_TARGET_PERCENT,
                    "PredefinedMetricSpecification": {"PredefinedMetricType": "ECSServiceAverageCPUUtilization"},
                }
            ),
        },
    )


def test_the_image_carries_the_holder_and_the_layers_contract_and_every_module_they_import(
    synthesized: tuple[MnsStack, Template, Path],
) -> None:
    """The tier imports the layer's contract module (`mnsd.waiting.contract`): the image's build context holds it,
    and every module of this repository the holder imports, and no more of the layer."""
    _, _, outdir = synthesized
    assets = json.loads((outdir / "Mns.assets.json").read_text())["dockerImages"]
    (image,) = assets.values()
    context = outdir / image["source"]["directory"]
    files = {str(p.relative_to(context)) for p in context.rglob("*") if p.is_file()}
    assert "layers/mnsd/python/mnsd/waiting/contract.py" in files
    assert not any(
        f.startswith("layers/") and not f.startswith("layers/mnsd/python/mnsd/waiting/")
        for f in files - {"layers/mnsd/python/mnsd/__init__.py"}
    )
    imported = {
        line.split()[1]
        for f in files
        if f.startswith("wait_tier/") and f.endswith(".py")
        for line in (context / f).read_text().splitlines()
        if line.startswith(("from mnsd", "from wait_tier", "import mnsd"))
    }
    for module in imported:
        path = module.replace(".", "/")
        root = "layers/mnsd/python/" if module.startswith("mnsd") else ""
        assert {f"{root}{path}.py", f"{root}{path}/__init__.py"} & files, module
