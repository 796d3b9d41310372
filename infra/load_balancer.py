"""The Application Load Balancer front door (`-c frontDoor=alb`, docs/front-door.md): one listener rule per route of
`mnsd.request.listener` (method and path pattern, in its priority order), each forwarding to its route's function
(or, with the wait tier, the tier's routes, `infra.wait_tier.ROUTES`, to the tier's tasks); what no rule takes goes to
the catch-all function.
ALB bills by the hour and by capacity units, not per request.

- With `domain_name` + `certificate_arn`: HTTPS on 443 with the certificate (TLS 1.2 and 1.3 only), for the domain
  and its account hosts (`{AccountId}.{domain}`, the certificate's wildcard name); HTTP on 80 only redirects there.
  Without: HTTP on 80 and nothing else (no certificate can name the load balancer's own DNS name): requests and
  messages travel unencrypted, their signatures still checked.
- Access logs to the stack's access log bucket (SSE-S3, which ALB requires), under `load-balancer/`.
- Invalid header fields dropped and HTTP desync mitigation at its strictest: ALB refuses ambiguous framing itself.
"""

from __future__ import annotations

from aws_cdk import Aws, CfnCondition, CfnMapping, Duration, Fn, ICfnConditionExpression
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_elasticloadbalancingv2 as elbv2
from aws_cdk import aws_elasticloadbalancingv2_targets as targets
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_s3 as s3
from aws_cdk.region_info import RegionInfo
from constructs import Construct

from infra.encryption import Encryption
from infra.functions import LOG_RETENTION, Functions
from infra.wait_tier import HOLD_PORT, WaitTier
from mnsd.request.listener import listener_rules
from mnsd.waiting.contract import READY_PATH

FRONT_DOORS = ("http-api", "alb")
ACCESS_LOG_PREFIX = "load-balancer"
# A long poll answers within 30 s (`mnsd.ground.deadlines`); the connection may idle a little longer than that.
IDLE_TIMEOUT = Duration.seconds(60)
# ALB delivers access logs from this service principal in Regions opened since August 2022, and from an account of
# its own in the older ones (AWS's Elastic Load Balancing user guide, "Enable access logs").
ELB_PRINCIPAL = "elasticloadbalancing.amazonaws.com"
LOG_DELIVERY = "logdelivery.elasticloadbalancing.amazonaws.com"


def front_door(value: object) -> str:
    """The context value `frontDoor`: `http-api` (the default: API Gateway's HTTP API) or `alb`."""
    text = "http-api" if value is None else str(value).strip().lower() or "http-api"
    if text not in FRONT_DOORS:
        raise ValueError(f"frontDoor must be http-api or alb, not {value!r}")
    return text


class LoadBalancer(Construct):
    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        functions: Functions,
        catch_all: str,
        access_logs: s3.Bucket,
        domain_name: str | None = None,
        certificate_arn: str | None = None,
        wait_tier: WaitTier | None = None,
        encryption: Encryption | None = None,
    ) -> None:
        super().__init__(scope, id)
        if bool(domain_name) != bool(certificate_arn):
            raise ValueError("a custom domain needs both domainName and certificateArn")
        self.vpc = wait_tier.vpc if wait_tier is not None else self._vpc(encryption or Encryption())
        self.security_group = ec2.SecurityGroup(
            self,
            "Group",
            vpc=self.vpc,
            allow_all_outbound=False,
            description="The MNS front door: HTTP(S) from anywhere",
        )
        self.load_balancer = elbv2.ApplicationLoadBalancer(
            self,
            "Alb",
            vpc=self.vpc,
            internet_facing=True,
            security_group=self.security_group,
            vpc_subnets=ec2.SubnetSelection(subnet_type=ec2.SubnetType.PUBLIC),
            idle_timeout=IDLE_TIMEOUT,
            drop_invalid_header_fields=True,
            desync_mitigation_mode=elbv2.DesyncMitigationMode.STRICTEST,
        )
        self._log_to(access_logs)
        self.domain_name = domain_name
        if domain_name and certificate_arn:
            listener = self.load_balancer.add_listener(
                "Https",
                port=443,
                certificates=[elbv2.ListenerCertificate.from_arn(certificate_arn)],
                ssl_policy=elbv2.SslPolicy.RECOMMENDED_TLS,
                default_action=self._forward(catch_all, functions),
            )
            self.load_balancer.add_redirect(source_port=80, target_port=443)
            self.endpoint = f"https://{domain_name}"
        else:
            listener = self.load_balancer.add_listener(
                "Http",
                port=80,
                protocol=elbv2.ApplicationProtocol.HTTP,
                default_action=self._forward(catch_all, functions),
            )
            self.endpoint = f"http://{self.load_balancer.load_balancer_dns_name}"
        self.listener = listener
        self.tier_targets: elbv2.ApplicationTargetGroup | None = None
        for rule in listener_rules():
            if wait_tier is not None and rule.route in wait_tier.routes:
                action = elbv2.ListenerAction.forward([self._tier_targets(wait_tier)])
            else:
                action = self._forward(rule.route, functions)
            listener.add_action(
                f"Rule-{rule.route}",
                priority=rule.priority,
                conditions=[
                    elbv2.ListenerCondition.http_request_methods([rule.method]),
                    elbv2.ListenerCondition.path_patterns([rule.path_pattern]),
                ],
                action=action,
            )

    def reviewed(self) -> list[tuple[Construct, str, str]]:
        """cdk-nag findings reviewed and accepted (`infra.nag`)."""
        return [
            (
                self.security_group,
                "AwsSolutions-EC23",
                "The MNS endpoint is public, as API Gateway's is: the load balancer takes HTTP(S) from any address and "
                "every call is authenticated by its MNS signature in the route functions; the account's endpoint "
                "allow-list (AuthorizeEndpointAcl) narrows it per account.",
            )
        ]

    def _vpc(self, encryption: Encryption) -> ec2.Vpc:
        """Two public subnets for the load balancer's nodes; nothing else runs in them (the functions are not in a VPC)."""
        vpc = ec2.Vpc(
            self,
            "Vpc",
            max_azs=2,
            nat_gateways=0,
            subnet_configuration=[ec2.SubnetConfiguration(name="front", subnet_type=ec2.SubnetType.PUBLIC)],
        )
        flow_logs = logs.LogGroup(self, "FlowLogs", retention=LOG_RETENTION, encryption_key=encryption.key)
        vpc.add_flow_log("FlowLog", destination=ec2.FlowLogDestination.to_cloud_watch_logs(flow_logs))
        return vpc

    def _forward(self, name: str, functions: Functions) -> elbv2.ListenerAction:
        function = functions.functions[name]
        group = elbv2.ApplicationTargetGroup(
            self,
            f"Targets-{name}",
            target_type=elbv2.TargetType.LAMBDA,
            targets=[targets.LambdaTarget(function)],
            # every value of a repeated header or parameter (`mnsd.entry.alb`), as API Gateway passes them
            multi_value_headers_enabled=True,
        )
        _from_this_account(function)
        return elbv2.ListenerAction.forward([group])

    def _tier_targets(self, wait_tier: WaitTier) -> elbv2.ApplicationTargetGroup:
        """The wait tier's tasks, on the port the HTTP API's VPC link reaches them on (one group for the tier's rules)."""
        if self.tier_targets is not None:
            return self.tier_targets
        assert wait_tier.service is not None, "the tier's service is made with its routes' integrations"
        group = self.tier_targets = elbv2.ApplicationTargetGroup(
            self,
            "Targets-wait-tier",
            vpc=self.vpc,
            port=HOLD_PORT,
            protocol=elbv2.ApplicationProtocol.HTTP,
            target_type=elbv2.TargetType.IP,
            targets=[wait_tier.service],
            health_check=elbv2.HealthCheck(path=READY_PATH, healthy_http_codes="204"),
            deregistration_delay=Duration.seconds(5),
        )
        wait_tier.task_group.add_ingress_rule(self.security_group, ec2.Port.tcp(HOLD_PORT), "from the load balancer")
        self.security_group.add_egress_rule(wait_tier.task_group, ec2.Port.tcp(HOLD_PORT), "to the wait tier")
        return group

    def _log_to(self, bucket: s3.Bucket) -> None:
        """Access logs under `load-balancer/`, delivered by ALB's log delivery principal or its Region's account
        (a template for any Region: the account is looked up in the Region it is deployed to)."""
        objects = bucket.arn_for_objects(f"{ACCESS_LOG_PREFIX}/AWSLogs/{Aws.ACCOUNT_ID}/*")
        accounts = _elb_accounts()
        mapping = CfnMapping(self, "ElbAccounts", mapping={region: {"account": a} for region, a in accounts.items()})
        legacy = CfnCondition(self, "LegacyRegion", expression=_region_in(sorted(accounts)))
        account = Fn.condition_if(legacy.logical_id, mapping.find_in_map(Aws.REGION, "account"), Aws.ACCOUNT_ID)
        for principal in (iam.ServicePrincipal(LOG_DELIVERY), iam.AccountPrincipal(account.to_string())):
            bucket.add_to_resource_policy(
                iam.PolicyStatement(actions=["s3:PutObject"], resources=[objects], principals=[principal])
            )
        self.load_balancer.set_attribute("access_logs.s3.enabled", "true")
        self.load_balancer.set_attribute("access_logs.s3.bucket", bucket.bucket_name)
        self.load_balancer.set_attribute("access_logs.s3.prefix", ACCESS_LOG_PREFIX)
        if bucket.policy is not None:  # ALB checks that it may write there when the attribute is set
            self.load_balancer.node.add_dependency(bucket.policy)


def _from_this_account(function: lambda_.Function) -> None:
    """The invoke permission `LambdaTarget` gives Elastic Load Balancing, for this account's load balancers only (it
    cannot name the target group: the group registers the function only once the permission exists)."""
    for child in function.node.children:
        if isinstance(child, lambda_.CfnPermission) and child.principal == ELB_PRINCIPAL:
            child.source_account = Aws.ACCOUNT_ID


def _elb_accounts() -> dict[str, str]:
    """Elastic Load Balancing's log-delivery account of each Region that has one (those opened before August 2022)."""
    found = {}
    for region in RegionInfo.regions:
        account = region.elbv2_account
        if account:
            found[region.name] = account
    return found


def _region_in(regions: list[str]) -> ICfnConditionExpression:
    """A condition expression: the stack's Region is one of `regions` (Fn::Or takes 2 to 10 conditions: nested)."""
    conditions: list[ICfnConditionExpression] = [Fn.condition_equals(Aws.REGION, region) for region in regions]
    while len(conditions) > 1:
        conditions = [
            Fn.condition_or(*group) if len(group) > 1 else group[0]
            for group in (conditions[i : i + 10] for i in range(0, len(conditions), 10))
        ]
    return conditions[0]
