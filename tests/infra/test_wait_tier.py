"""The template with the wait tier (`-c waitTier=grip`, infra/wait_tier.py): cdk-nag and cfn-lint clean, the receive
route through a VPC link to two arm64 Fargate tasks deployed rolling, wakes on an IAM route only the functions may
call, the tier's key readable by the receive function and the tasks only. (Without the flag the template has no
trace of it: tests/infra/test_stack.py.)"""

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


def test_the_receive_route_goes_through_the_vpc_link_and_every_other_route_to_its_function(template: Template) -> None:
    routes = template.find_resources("AWS::ApiGatewayV2::Route")
    integrations = template.find_resources("AWS::ApiGatewayV2::Integration")
    by_key = {r["Properties"]["RouteKey"]: r["Properties"] for r in routes.values()}
    receive = integrations[by_key["GET /queues/{queue}/messages"]["Target"]["Fn::Join"][1][1]["Ref"]]["Properties"]
    assert (receive["IntegrationType"], receive["ConnectionType"]) == ("HTTP_PROXY", "VPC_LINK")
    wake = by_key[f"POST {WAKE_PATH}"]
    assert wake["AuthorizationType"] == "AWS_IAM"
    others = [p for key, p in by_key.items() if key not in ("GET /queues/{queue}/messages", f"POST {WAKE_PATH}")]
    for route in others:
        target = integrations[route["Target"]["Fn::Join"][1][1]["Ref"]]["Properties"]
        assert target["IntegrationType"] == "AWS_PROXY", route["RouteKey"]


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


def test_only_the_receive_function_and_the_tasks_read_the_wait_tier_key(template: Template) -> None:
    key = logical_id(template, "AWS::SecretsManager::Secret", "Mns/WaitTier/GripKey/Resource")
    readers = [
        name
        for name, policy in template.find_resources("AWS::IAM::Policy").items()
        if any(
            "secretsmanager:GetSecretValue" in json.dumps(s["Action"]) and key in json.dumps(s.get("Resource"))
            for s in policy["Properties"]["PolicyDocument"]["Statement"]
        )
    ]
    roles = {json.dumps(template.find_resources("AWS::IAM::Policy")[name]["Properties"]["Roles"]) for name in readers}
    assert len(readers) == 2, roles  # the receive function's role, the task execution role
    receive = next(
        f["Properties"] for f in template.find_resources("AWS::Lambda::Function").values()
        if f["Properties"]["Handler"] == "get_messages.handler"
    )  # fmt: skip
    assert receive["Environment"]["Variables"][settings.WAIT_TIER_KEY_SECRET_ARN] == {"Ref": key}


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
