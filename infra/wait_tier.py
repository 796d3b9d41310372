"""The wait tier (`-c waitTier=grip`, docs/wait_tier.md): the holder (`wait_tier/`, one process) on ECS Fargate
(arm64, two tasks, rolling deploys), in front of the message routes through an HTTP API VPC link (or the load
balancer's listener rules, `infra.load_balancer`), so a long poll with nothing to receive waits in the tier and not in
a billed Lambda invocation, and concurrent single sends, receives and deletes of a queue reach their function as one
batch call (`wait_tier.coalesce`).

- The routes of `ROUTES` (`GET`, `POST` and `DELETE /queues/{queue}/messages`: receive and peek, send and batch send,
  delete and batch delete) go to the tier through the VPC link (Cloud Map names the tasks); the tier asks each route's
  own function through its function URL (by the request's method), signing each request with a key of its own secret
  (`mnsd.waiting.contract.SIG_HEADER`), which the function verifies: a request without it is served as without the
  tier, one with a forged one is not taken for the tier's. Each function keeps its own role, memory and concurrency.
- Whatever makes a message receivable tells the tier: in its answer when the request came through the tier
  (`contract.WAKES_HEADER`), else by a post to `POST /wait-tier/wake` on the same API (IAM-authorized: only the
  stack's functions may), which reaches one task's holder. A holder passes each wake on to the other tasks (found in
  Cloud Map) on their wake port.
- The tasks have public addresses and no inbound rule but from the VPC link: no NAT gateway to pay for.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from aws_cdk import Duration, IgnoreMode, RemovalPolicy, Stack
from aws_cdk import aws_apigatewayv2 as apigw
from aws_cdk import aws_apigatewayv2_authorizers as authorizers
from aws_cdk import aws_apigatewayv2_integrations as integrations
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_ecr_assets as ecr_assets
from aws_cdk import aws_ecs as ecs
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_secretsmanager as secretsmanager
from aws_cdk import aws_servicediscovery as servicediscovery
from constructs import Construct

from infra.encryption import Encryption
from infra.functions import LOG_RETENTION
from mnsd.ground import settings
from mnsd.request.coalesced import BATCH_ROUTES
from mnsd.request.routes import Route
from mnsd.waiting.contract import READY_PATH

# The image is built from the repository with wait_tier/Dockerfile, from the holder and the one file of the layer it
# imports (the contract it shares with the service), and nothing else.
ROOT = Path(__file__).resolve().parents[1]
DOCKERFILE = "wait_tier/Dockerfile"
IMAGE_FILES = (
    "wait_tier/*.py",
    "wait_tier/Dockerfile",
    "layers/mnsd/python/mnsd/__init__.py",
    "layers/mnsd/python/mnsd/waiting/__init__.py",
    "layers/mnsd/python/mnsd/waiting/contract.py",
)
# The routes the tier fronts (the message routes whose single calls it coalesces), each asking its own function.
ROUTES = BATCH_ROUTES
HOLD_PORT = 7999  # the holder: the tier's routes and the API's wake route
WAKE_PORT = 7990  # the holder: wakes relayed between tasks
# The task's health: the holder's readiness on the receive route's port.
HEALTH_PROBE = f"import urllib.request; urllib.request.urlopen('http://127.0.0.1:{HOLD_PORT}{READY_PATH}', timeout=2)"
WAKE_PATH = "/wait-tier/wake"
NAMESPACE = "mns-wait-tier.internal"
# Per task: one asyncio process holding thousands of idle connections.
CPU = 256
MEMORY_MIB = 512
TASKS = 2
MAX_TASKS = 8  # tasks while busy (infra.wait_tier's CPU scaling)
CPU_TARGET_PERCENT = 50
# A stopping task's in-flight origin answers finish before it exits (its held waits are dropped: clients poll again).
DRAIN_SECONDS = 5


def enabled(value: object) -> bool:
    """The context value `waitTier`: `grip` turns the tier on; unset or `off` leaves the stack as it is."""
    text = "" if value is None else str(value).strip().lower()
    if text not in ("", "off", "grip"):
        raise ValueError(f"waitTier must be grip or off, not {value!r}")
    return text == "grip"


class WaitTier(Construct):
    """The tier's network, key and service; `integration` puts it in front of the routes of `ROUTES`."""

    def __init__(self, scope: Construct, id: str, *, encryption: Encryption | None = None) -> None:
        super().__init__(scope, id)
        self.encryption = encryption or Encryption()
        self.key = secretsmanager.Secret(
            self,
            "GripKey",
            description="Signs the wait tier's requests to the functions of the message routes",
            generate_secret_string=secretsmanager.SecretStringGenerator(exclude_punctuation=True, password_length=48),
        )
        self.encryption.encrypt_secret(self.key)
        self.vpc = ec2.Vpc(
            self,
            "Vpc",
            max_azs=2,
            nat_gateways=0,
            subnet_configuration=[ec2.SubnetConfiguration(name="tier", subnet_type=ec2.SubnetType.PUBLIC)],
        )
        flow_logs = logs.LogGroup(
            self, "FlowLogs", retention=LOG_RETENTION, removal_policy=RemovalPolicy.DESTROY,
            encryption_key=self.encryption.key,
        )  # fmt: skip
        self.vpc.add_flow_log("FlowLog", destination=ec2.FlowLogDestination.to_cloud_watch_logs(flow_logs))
        self.link_group = ec2.SecurityGroup(
            self, "LinkGroup", vpc=self.vpc, allow_all_outbound=False, description="The VPC link of the API"
        )
        self.task_group = ec2.SecurityGroup(
            self, "TaskGroup", vpc=self.vpc, description="The wait tier tasks: reached from the VPC link only"
        )
        self.task_group.add_ingress_rule(self.link_group, ec2.Port.tcp(HOLD_PORT), "from the VPC link of the API")
        self.link_group.add_egress_rule(self.task_group, ec2.Port.tcp(HOLD_PORT), "to the wait tier")
        # The wakes one task passes on to the others.
        self.task_group.add_ingress_rule(self.task_group, ec2.Port.tcp(WAKE_PORT), "wakes between tasks")
        self.link = apigw.VpcLink(
            self,
            "Link",
            vpc=self.vpc,
            security_groups=[self.link_group],
            subnets=ec2.SubnetSelection(subnet_type=ec2.SubnetType.PUBLIC),
        )
        self.namespace = servicediscovery.PrivateDnsNamespace(self, "Namespace", name=NAMESPACE, vpc=self.vpc)
        self.cluster = ecs.Cluster(self, "Cluster", vpc=self.vpc)
        self.service: ecs.FargateService | None = None
        self.container: ecs.ContainerDefinition | None = None
        self.routes: list[str] = []  # the routes integrated with the tier so far
        self._integration: apigw.HttpRouteIntegration | None = None

    def integration(self, route: Route, function: lambda_.Function) -> apigw.HttpRouteIntegration | None:
        """The route's integration when the tier fronts it (None: not one of `ROUTES`): the tier, asking `function`
        (the route's own) through its URL for the route's method."""
        if route.name not in ROUTES:
            return None
        url = function.add_function_url(auth_type=lambda_.FunctionUrlAuthType.NONE)
        function.add_environment(settings.WAIT_TIER_KEY_SECRET_ARN, self.key.secret_arn)
        self.key.grant_read(function)
        if self.container is None:
            self.hold = self._service()
        assert self.container is not None
        # The long-poll route's function is the origin of whatever names no method of its own (`wait_tier.__main__`).
        origin = "WAIT_TIER_ORIGIN" if route.long_poll else f"WAIT_TIER_ORIGIN_{route.method}"
        self.container.add_environment(origin, url.url)
        self.routes.append(route.name)
        if self._integration is None:
            self._integration = integrations.HttpServiceDiscoveryIntegration(
                "Int-wait-tier", self.hold, vpc_link=self.link
            )
        return self._integration

    def _service(self) -> servicediscovery.Service:
        task = ecs.FargateTaskDefinition(
            self,
            "Task",
            cpu=CPU,
            memory_limit_mib=MEMORY_MIB,
            runtime_platform=ecs.RuntimePlatform(
                cpu_architecture=ecs.CpuArchitecture.ARM64, operating_system_family=ecs.OperatingSystemFamily.LINUX
            ),
        )
        logs_group = logs.LogGroup(
            self, "Logs", retention=LOG_RETENTION, removal_policy=RemovalPolicy.DESTROY,
            encryption_key=self.encryption.key,
        )  # fmt: skip
        container = task.add_container(
            "Tier",
            image=ecs.ContainerImage.from_asset(
                str(ROOT),
                file=DOCKERFILE,
                exclude=["*", *(f"!{path}" for path in IMAGE_FILES)],
                ignore_mode=IgnoreMode.DOCKER,
                platform=ecr_assets.Platform.LINUX_ARM64,
            ),
            logging=ecs.LogDriver.aws_logs(stream_prefix="tier", log_group=logs_group),
            environment={  # (and the origins: `integration`)
                "WAIT_TIER_PORT": str(HOLD_PORT),
                "WAIT_TIER_WAKE_PORT": str(WAKE_PORT),
                "WAIT_TIER_CLOUDMAP_NAMESPACE": NAMESPACE,
                "WAIT_TIER_CLOUDMAP_SERVICE": "hold",
                "WAIT_TIER_DRAIN_SECONDS": str(DRAIN_SECONDS),
            },
            secrets={"WAIT_TIER_KEY": ecs.Secret.from_secrets_manager(self.key)},
            health_check=ecs.HealthCheck(
                command=["CMD", "python3", "-c", HEALTH_PROBE],
                interval=Duration.seconds(15),
            ),
            stop_timeout=Duration.seconds(DRAIN_SECONDS + 10),
        )
        self.container = container
        container.add_port_mappings(
            ecs.PortMapping(container_port=HOLD_PORT), ecs.PortMapping(container_port=WAKE_PORT)
        )
        self.service = ecs.FargateService(
            self,
            "Service",
            cluster=self.cluster,
            task_definition=task,
            desired_count=TASKS,
            min_healthy_percent=100,  # a rolling deploy starts new tasks before it stops old ones
            max_healthy_percent=200,
            circuit_breaker=ecs.DeploymentCircuitBreaker(rollback=True),
            assign_public_ip=True,  # (no NAT gateway: ECR, Secrets Manager, Cloud Map and the function URL)
            security_groups=[self.task_group],
            vpc_subnets=ec2.SubnetSelection(subnet_type=ec2.SubnetType.PUBLIC),
        )
        # A busy queue's calls cost the tier CPU (the holder's pass to the origin: about 0.6 ms a receive, measured
        # locally in bench/results/wait_tier.md), so a task of 0.25 vCPU passes some hundreds a second: more tasks while
        # the CPU is busy, back to two when it is not (a task stopped drops only waits).
        self.service.auto_scale_task_count(min_capacity=TASKS, max_capacity=MAX_TASKS).scale_on_cpu_utilization(
            "Cpu",
            target_utilization_percent=CPU_TARGET_PERCENT,
            scale_out_cooldown=Duration.seconds(60),
            scale_in_cooldown=Duration.minutes(5),
        )
        # One Cloud Map service (ECS registers a service once): the API reaches the holder there for the tier's
        # routes and the wake route, and each holder finds the other tasks there.
        hold = self.namespace.create_service(
            "Hold", name="hold", dns_record_type=servicediscovery.DnsRecordType.SRV, dns_ttl=Duration.seconds(10),
            custom_health_check=servicediscovery.HealthCheckCustomConfig(failure_threshold=1),
        )  # fmt: skip
        self.service.associate_cloud_map_service(service=hold, container=container, container_port=HOLD_PORT)
        task.task_role.add_to_principal_policy(
            iam.PolicyStatement(
                actions=["servicediscovery:DiscoverInstances"],
                resources=["*"],  # (no resource-level permission: the namespace is named in the call)
            )
        )
        return hold

    def add_wake_route(self, http_api: apigw.HttpApi) -> str:
        """`POST /wait-tier/wake` to the tier, for IAM principals only; its URL."""
        http_api.add_routes(
            path=WAKE_PATH,
            methods=[apigw.HttpMethod.POST],
            integration=integrations.HttpServiceDiscoveryIntegration(
                "Int-wait-tier-wake", self.hold, vpc_link=self.link
            ),
            authorizer=authorizers.HttpIamAuthorizer(),
        )
        self.wake_route_arn = Stack.of(self).format_arn(
            service="execute-api", resource=http_api.api_id, resource_name=f"$default/POST{WAKE_PATH}"
        )
        return http_api.api_endpoint + WAKE_PATH

    def reviewed(self) -> list[tuple[Construct, str, str]]:
        """cdk-nag findings reviewed and accepted (`infra.nag`)."""
        return [
            (
                self,
                "AwsSolutions-IAM5[Resource::*]",
                "servicediscovery:DiscoverInstances (the holder finds the other tasks; the action has no resource-level "
                "permission) and ecr:GetAuthorizationToken (the task execution role pulling the image; likewise).",
            ),
            (
                self,
                "AwsSolutions-ECS2",
                "The container's environment is its configuration (ports, the origin URL, the Cloud Map names); its "
                "only secret, the tier's key, comes from Secrets Manager.",
            ),
            (
                self,
                "AwsSolutions-ECS4",
                "Container Insights would bill per-task metrics worth a large share of the tier's fixed cost "
                "(bench/results/wait_tier.md); the tier's health shows in the ECS service's events and deployments "
                "(circuit breaker), the tasks' logs and the API's alarms on the receive route.",
            ),
            (
                self,
                "AwsSolutions-SMG4",
                "The tier's key is shared by the tasks and the functions of the routes it fronts, which read it at "
                "start: a new key "
                "is rolled out by a deploy (replacing the secret), not rotated behind their back.",
            ),
        ]

    def grant_wake(self, functions: Iterable[lambda_.Function]) -> None:
        """Each of `functions` may post wakes (it makes messages receivable, or may)."""
        for function in functions:
            function.add_to_role_policy(
                iam.PolicyStatement(actions=["execute-api:Invoke"], resources=[self.wake_route_arn])
            )
