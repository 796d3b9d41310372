"""The one stack: it composes the constructs and wires them; each construct lives in its own module."""

from typing import Any

from aws_cdk import CfnOutput, Stack
from constructs import Construct

from infra.analytics import BACKLOG_SOURCES, Analytics, BacklogSnapshots, Exports, exported_tables, operation_log
from infra.api import CATCH_ALL, Api
from infra.capacity import Capacity
from infra.console import Console
from infra.encryption import Encryption
from infra.functions import Functions
from infra.load_balancer import LoadBalancer, front_door
from infra.metrics import Dashboard, MetricsSampler
from infra.monitoring import PERIOD, SAMPLER_BEHIND, Alarms
from infra.observability import LogSettings, choice
from infra.push import PushDelivery, SigningKey
from infra.secrets import Secrets
from infra.storage import Buckets
from infra.table_capacity import Provisioned
from infra.tables import Tables
from infra.wait_tier import WaitTier, enabled
from mnsd.ground import settings
from mnsd.log.oplog import RETENTION_SECONDS as LOG_RETENTION_SECONDS
from mnsd.push.signing import CERTIFICATE_PATH
from mnsd.request.routes import ROUTES


class MnsStack(Stack):
    """Context values (cdk.json or `-c`): mnsRegion, deletionProtection, the concurrency and size settings of
    `infra.capacity.Capacity` (accountConcurrency, receiveConcurrency, ..., reservedConcurrency), the optional
    domainName + certificateArn (serve the API at the root of that host) and alarmEmail, and the customer-managed
    key of `infra.encryption.Encryption` (kmsKeyArn, or createKmsKey=true), and metricsDefault (true: a queue or
    topic that never set MetricsEnabled is monitored; false: only those that chose it), and waitTier (`grip`: long
    polls wait in the wait tier of `infra.wait_tier`, not in Lambda), and capacity (`provisioned`: the tables and
    the ready index provisioned with auto-scaling, `infra.table_capacity`; on demand by default), and pushLambdaArns and
    pushEventBusArns (the Lambda functions and EventBridge buses subscriptions may push to, `infra.push.PushTargets`;
    none by default), what the stack logs and traces (`infra.observability`: functionLogs, accessLogFields, tracing),
    and frontDoor (`alb`: an Application Load Balancer is the clients' endpoint and takes the custom domain,
    `infra.load_balancer`; API Gateway's HTTP API by default), and backlogSnapshot (`counts`, the default: the
    analytics' backlog snapshot from each queue's counts, the message table not exported; `export`: from daily full
    exports of the message and meta tables, `infra.analytics`)."""

    def __init__(self, scope: Construct, id: str, **kwargs: Any) -> None:
        super().__init__(scope, id, **kwargs)
        # Access logs are delivered under a bucket policy, not the legacy ACL.
        self.node.set_context("@aws-cdk/aws-s3:serverAccessLogsUseBucketPolicy", True)
        context = self.node.try_get_context
        self.capacity = Capacity.from_context(context)
        self.encryption = Encryption.from_context(self, context)
        # `-c deletionProtection=true` arrives as a string, cdk.json's `true` as a boolean.
        self.tables = Tables(
            self,
            "Tables",
            deletion_protection=str(context("deletionProtection")).lower() == "true",
            encryption=self.encryption,
            capacity=Provisioned.from_context(context),
        )
        self.buckets = Buckets(self, "Buckets", encryption=self.encryption)
        self.secrets = Secrets(self, "Secrets", encryption=self.encryption)
        self.functions = Functions(
            self,
            "Functions",
            tables=self.tables.by_name,
            environment={
                **self.tables.environment(),
                settings.REGION: context("mnsRegion") or "cn-hangzhou",
                # Requests one account may make per second (0: none), `mnsd.control.limits`.
                settings.ACCOUNT_REQUESTS_PER_SECOND: str(int(str(context("accountRequestsPerSecond") or 0))),
                # How HTTP pushes name their signed headers (`mnsd.push.delivery.http_push`): `-c pushHeaderNames=
                # with-lower-case-copies` for receivers built on the Python SDK's sample endpoint.
                settings.PUSH_HEADER_NAMES: context("pushHeaderNames") or "live",
                # Whether a queue or topic that left MetricsEnabled unset is monitored (`mnsd.metrics.monitored`).
                settings.METRICS_DEFAULT: metrics_default(context("metricsDefault")),
            },
            encryption=self.encryption,
            log_settings=LogSettings.from_context(context),
        )
        for variable, secret in self.secrets.by_variable().items():
            self.functions.add_secret(variable, secret)
        self.wait_tier = (
            WaitTier(self, "WaitTier", encryption=self.encryption) if enabled(context("waitTier")) else None
        )
        # With the load balancer as the front door the HTTP API stays (idle, it costs nothing), for the console's pages
        # and the wait tier's wake route; the custom domain is the load balancer's.
        behind_alb = front_door(context("frontDoor")) == "alb"
        self.api = Api(
            self,
            "Api",
            functions=self.functions,
            routes=ROUTES,
            domain_name=None if behind_alb else context("domainName"),
            certificate_arn=None if behind_alb else context("certificateArn"),
            capacity=self.capacity,
            tier_route=self.wait_tier.integration if self.wait_tier else None,
        )
        self.load_balancer = (
            LoadBalancer(
                self,
                "FrontDoor",
                functions=self.functions,
                catch_all=CATCH_ALL,
                access_logs=self.buckets.access_logs,
                domain_name=context("domainName"),
                certificate_arn=context("certificateArn"),
                wait_tier=self.wait_tier,
                encryption=self.encryption,
            )
            if behind_alb
            else None
        )
        self.endpoint = self.load_balancer.endpoint if self.load_balancer else self.api.endpoint
        https_door = self.load_balancer if self.load_balancer and self.load_balancer.domain_name else None
        if self.wait_tier is not None:  # every function made from here on gets it too
            self.functions.add_environment(
                settings.WAIT_TIER_WAKE_URL, self.wait_tier.add_wake_route(self.api.http_api)
            )
        self.console = Console(self, "Console", functions=self.functions, http_api=self.api.http_api)
        self.signing_key = SigningKey(self, "SigningKey", functions=self.functions)
        self.functions.functions["get_signing_certificate"].add_environment(
            settings.SIGNING_CERTIFICATE, self.signing_key.certificate
        )
        self.push = PushDelivery(
            self,
            "Push",
            functions=self.functions,
            topic_messages=self.tables.topic_messages,
            signing_key=self.signing_key,
            # over HTTPS: the load balancer's with a domain, else the HTTP API's (a load balancer without one is HTTP only)
            certificate_url=(https_door.endpoint if https_door else self.api.endpoint) + CERTIFICATE_PATH,
            capacity=self.capacity,
        )
        operation_log(self.functions, self.tables.messages)
        backlog_source = choice(context("backlogSnapshot"), BACKLOG_SOURCES, "backlogSnapshot")
        tables = {"log": self.tables.log, "messages": self.tables.messages, "meta": self.tables.meta}
        exported = {label: tables[label] for label in exported_tables(backlog_source)}
        self.exports = Exports(self, "Exports", functions=self.functions, bucket=self.buckets.data, tables=exported)
        self.backlog_snapshots = (
            BacklogSnapshots(
                self, "BacklogSnapshots", functions=self.functions, bucket=self.buckets.data, rule=self.exports.rule
            )
            if backlog_source == "counts"
            else None
        )
        self.analytics = Analytics(
            self,
            "Analytics",
            bucket=self.buckets.data,
            log_ttl_hours=LOG_RETENTION_SECONDS // 3600,
            encryption=self.encryption,
            backlog_source=backlog_source,
        )
        self.sampler = MetricsSampler(
            self, "MetricsSampler", functions=self.functions, push_retries=self.push.state_machine
        )
        self.dashboard = Dashboard(self, "Dashboard")
        if self.wait_tier is not None:
            self.wait_tier.grant_wake(self.functions.functions.values())
        # New constructs go above the alarms: those cover every function made through `self.functions`.
        self.alarms = Alarms(
            self,
            "Alarms",
            functions=self.functions.functions,
            tables=self.tables.by_name,
            http_api=self.api.http_api,
            email=context("alarmEmail"),
            encryption=self.encryption,
        )
        failures = {
            # A push task the worker failed five times (a bug, an outage): its Task timed out meanwhile and the
            # strategy went on without that attempt.
            "PushDeadLetters": self.push.dead_letters,
            # A stream batch the fan-out failed on through every retry (or that aged out): its first attempts
            # were never made. The message names the shard and sequence numbers to replay.
            "FanoutFailures": self.push.fanout_failures,
            # A first attempt the first-attempt function failed five times (the retry workflow could not be
            # started): the push was neither made nor retried. The message carries the subscription and the message.
            "FirstAttemptDeadLetters": self.push.first_attempt_dead_letters,
        }
        for id, queue in failures.items():
            visible = queue.metric_approximate_number_of_messages_visible(period=PERIOD, statistic="Maximum")
            self.alarms.add(id, visible)
        self.analytics.notify_failures(self.alarms.topic)
        self.sampler.notify(self.alarms.topic.topic_arn)
        self.alarms.add("MetricsSamplerBehind", SAMPLER_BEHIND)  # queues a run left unsampled (late or failed)
        CfnOutput(self, "Endpoint", value=self.endpoint, description="MNS endpoint for the SDKs")
        domain_targets = (
            ("DomainTarget", self.api.domain_name, "Point the custom domain's DNS (CNAME or alias) here"),
            (
                "AccountDomainTarget",
                self.api.account_domain_name,
                "Point the wildcard name *.{domain} here ({AccountId}.{domain} reaches an account)",
            ),
        )
        for id, domain, description in domain_targets:
            if domain is not None:
                CfnOutput(self, id, value=domain.regional_domain_name, description=description)
        if self.load_balancer is not None and self.load_balancer.domain_name:
            for id, _, description in domain_targets:
                dns_name = self.load_balancer.load_balancer.load_balancer_dns_name
                CfnOutput(self, id, value=dns_name, description=description)
        CfnOutput(
            self,
            "CredentialsSecretArn",
            value=self.secrets.credentials.secret_arn,
            description="The access keys' secret: python -m admin --secret-arn <this> ...",
        )
        CfnOutput(self, "DataBucket", value=self.buckets.data.bucket_name, description="Exports and analytics")
        CfnOutput(self, "AlarmTopicArn", value=self.alarms.topic.topic_arn, description="Subscribe to get alarms")
        CfnOutput(
            self,
            "DashboardName",
            value=self.dashboard.dashboard.dashboard_name,
            description="The busiest queues and topics (CloudWatch console, Dashboards)",
        )


def metrics_default(value: object) -> str:
    """The context value `metricsDefault` (true unless given; `-c` gives a string, cdk.json a boolean) as the
    environment carries it."""
    text = "true" if value is None else str(value).strip().lower()
    if text not in ("true", "false"):
        raise ValueError(f"metricsDefault must be true or false, not {value!r}")
    return text
