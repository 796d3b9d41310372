"""Push delivery on AWS: fan-out from the topic message table's stream, retries in Step Functions.

    PublishMessage --put--> topic message table --stream (INSERT)--> fanout function
        first attempts to queue endpoints; those to HTTP, mail and SMS endpoints
        --SendMessageBatch--> first-attempt FIFO queue (a message group per subscription) --> first_attempt function
        a failed first attempt starts one execution of the retry state machine
    state machine (mnsd.push.workflow, the definition the local runtime executes)
        --sqs:sendMessage.waitForTaskToken--> push queue --> push_worker function
        (one retry, answered with SendTaskSuccess / SendTaskFailure; or a drop, recorded)

The signing key of HTTP pushes is made at deploy time by a custom resource (`functions/signing_setup.py`)
and kept in Secrets Manager; its public certificate reaches the certificate route through the environment.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from aws_cdk import Aws, CustomResource, Duration, Stack
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_lambda_event_sources as sources
from aws_cdk import aws_logs as logs
from aws_cdk import aws_secretsmanager as secretsmanager
from aws_cdk import aws_sqs as sqs
from aws_cdk import aws_stepfunctions as sfn
from constructs import Construct

from infra.capacity import Capacity
from infra.encryption import Encryption
from infra.functions import LOG_RETENTION, Functions
from mnsd.ground import settings
from mnsd.push.workflow import ATTEMPT_TIMEOUT_SECONDS, definition_json

# The worker answers within an attempt's timeout; AWS advises a queue visibility of at least six times the
# function's timeout, so a batch being retried by the event source is never handed out twice meanwhile.
WORKER_TIMEOUT = Duration.seconds(ATTEMPT_TIMEOUT_SECONDS - 10)
WORKER_VISIBILITY = Duration.seconds(6 * WORKER_TIMEOUT.to_seconds())
FANOUT_TIMEOUT = Duration.seconds(60)
# First attempts handed over by the fan-out (their table access: `infra.grants`). A batch's attempts run
# concurrently, each at most 5 s.
FIRST_ATTEMPT_TIMEOUT = Duration.seconds(30)
FIRST_ATTEMPT_VISIBILITY = Duration.seconds(6 * FIRST_ATTEMPT_TIMEOUT.to_seconds())
# A first attempt older than its topic message's retention (one day) is not worth making.
FIRST_ATTEMPT_RETENTION = Duration.days(1)
# A stream batch that keeps failing is split (bisect) and retried this often, never past this age; then its
# description goes to the fan-out's failure queue (alarmed) instead of being dropped by the stream.
FANOUT_RETRY_ATTEMPTS = 3
FANOUT_MAX_RECORD_AGE = Duration.hours(1)
# Callback-pattern answers name a task token, not a resource: the service authorization reference lists no
# resource type for them, so IAM only matches them on "*".
TASK_RESPONSE_ACTIONS = ["states:SendTaskSuccess", "states:SendTaskFailure", "states:SendTaskHeartbeat"]


SETUP_TIMEOUT = Duration.seconds(60)


class SigningKey(Construct):
    """The RSA key that signs HTTP pushes (a secret) and its self-signed certificate (public)."""

    def __init__(self, scope: Construct, id: str, *, functions: Functions) -> None:
        super().__init__(scope, id)
        self.secret = secretsmanager.Secret(self, "Key", description="MNS push signing key (PEM)")
        functions.encryption.encrypt_secret(self.secret)
        setup = functions.add("signing_setup", timeout=SETUP_TIMEOUT, shared_secrets=False)
        functions.grant_key(setup)
        self.secret.grant_write(setup)
        self.secret.grant_read(setup)  # an Update with the same secret re-reads the key for its certificate
        # The function answers CloudFormation itself (its ResponseURL): no provider framework function. Should it
        # never answer (killed before its handler runs), CloudFormation gives up after `service_timeout`, not 1 h.
        resource = CustomResource(
            self,
            "Material",
            service_token=setup.function_arn,
            resource_type="Custom::PushSigningKey",
            properties={"SecretArn": self.secret.secret_arn},
            service_timeout=Duration.seconds(3 * SETUP_TIMEOUT.to_seconds()),
        )
        self.certificate = resource.get_att_string("Certificate")


# What an allow-list entry of `PushTargets` must look like (its name part may hold `*`): a function or a bus ARN of a
# partition, never a wildcard service, account or region part that IAM would widen to other services' resources.
_TARGET_PATTERNS = {
    "pushLambdaArns": re.compile(r"arn:(aws|aws-cn|aws-us-gov):lambda:[a-z0-9-]+:\d{12}:function:[A-Za-z0-9_*$:-]+\Z"),
    "pushEventBusArns": re.compile(
        r"arn:(aws|aws-cn|aws-us-gov):events:[a-z0-9-]+:\d{12}:event-bus/[A-Za-z0-9._/*-]+\Z"
    ),
}


@dataclass(frozen=True)
class PushTargets:
    """The Lambda functions and EventBridge buses subscriptions may push to (`-c pushLambdaArns=arn,...`, `-c
    pushEventBusArns=arn,...`; ARNs, or patterns whose name part holds `*`): none by default, and then such
    subscriptions are refused at Subscribe (`mnsd.model.cloud_targets`). The push functions may invoke exactly these
    functions and put events on exactly these buses; the same lists reach every function's environment, which
    Subscribe and each attempt check."""

    lambda_arns: tuple[str, ...] = ()
    event_bus_arns: tuple[str, ...] = ()

    @classmethod
    def from_context(cls, context: Callable[[str], Any]) -> PushTargets:
        lists = {}
        for name, pattern in _TARGET_PATTERNS.items():
            entries = tuple(e.strip() for e in str(context(name) or "").split(",") if e.strip())
            for entry in entries:
                if not pattern.match(entry):
                    raise ValueError(f"{name}: {entry!r} is not an ARN of that kind (region and account spelled out)")
            lists[name] = entries
        return cls(lists["pushLambdaArns"], lists["pushEventBusArns"])

    def environment(self) -> dict[str, str]:
        return {
            settings.PUSH_LAMBDA_ARNS: ",".join(self.lambda_arns),
            settings.PUSH_EVENT_BUS_ARNS: ",".join(self.event_bus_arns),
        }

    def grant(self, function: lambda_.Function) -> None:
        """`lambda:InvokeFunction` on the listed functions and `events:PutEvents` on the listed buses; nothing when a
        list is empty. (A function of another account must also grant this role in its own resource policy.)"""
        for action, resources in (
            ("lambda:InvokeFunction", self.lambda_arns),
            ("events:PutEvents", self.event_bus_arns),
        ):
            if resources:
                function.add_to_role_policy(iam.PolicyStatement(actions=[action], resources=list(resources)))

    def patterns(self) -> list[str]:
        """The entries that are patterns (cdk-nag names each in a finding on the roles that hold it)."""
        return [entry for entry in (*self.lambda_arns, *self.event_bus_arns) if "*" in entry]


class PushDelivery(Construct):
    """The fan-out and push worker functions, the push queue and the retry state machine."""

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        functions: Functions,
        topic_messages: dynamodb.ITable,
        signing_key: SigningKey,
        certificate_url: str,
        capacity: Capacity | None = None,
    ) -> None:
        super().__init__(scope, id)
        capacity = capacity or Capacity()
        self.targets = PushTargets.from_context(self.node.try_get_context)  # the functions and buses pushes may reach
        for variable, value in self.targets.environment().items():  # every function's: Subscribe checks them too
            functions.add_environment(variable, value)
        encryption = functions.encryption
        self.dead_letters = sqs.Queue(
            self, "PushDeadLetters", retention_period=Duration.days(14), enforce_ssl=True,
            encryption=encryption.queue_encryption(),
        )  # fmt: skip
        self.queue = sqs.Queue(
            self,
            "PushAttempts",
            visibility_timeout=WORKER_VISIBILITY,
            enforce_ssl=True,
            encryption=encryption.queue_encryption(),
            dead_letter_queue=sqs.DeadLetterQueue(queue=self.dead_letters, max_receive_count=5),
        )
        self.state_machine = sfn.StateMachine(
            self,
            "Retries",
            definition_body=sfn.DefinitionBody.from_string(definition_json(self.queue.queue_url, Aws.PARTITION)),
            state_machine_type=sfn.StateMachineType.STANDARD,  # the longest schedule runs a day
            tracing_enabled=functions.log_settings.tracing,  # `-c tracing=active` (infra.observability)
            logs=sfn.LogOptions(
                destination=logs.LogGroup(self, "RetryLogs", retention=LOG_RETENTION, encryption_key=encryption.key),
                level=sfn.LogLevel.ALL,
            ),
        )
        encryption.encrypt_state_machine(self.state_machine)
        self.queue.grant_send_messages(self.state_machine)

        environment = {
            settings.PUSH_STATE_MACHINE_ARN: self.state_machine.state_machine_arn,
            settings.PUSH_QUEUE_URL: self.queue.queue_url,
            settings.SIGNING_CERT_URL: certificate_url,
        }
        secrets = {settings.SIGNING_KEY_SECRET_ARN: signing_key.secret}
        self.first_attempts, self.first_attempt_dead_letters = first_attempt_queues(self, encryption)
        first_attempt_environment = {**environment, settings.FIRST_ATTEMPT_QUEUE_URL: self.first_attempts.queue_url}
        made = {
            name: functions.add(
                name,
                timeout=timeout,
                environment=variables,
                secrets=secrets,
                reserved_concurrency=capacity.reservation(concurrency),
            )
            for name, timeout, variables, concurrency in (
                ("fanout", FANOUT_TIMEOUT, first_attempt_environment, capacity.fanout_concurrency),
                ("first_attempt", FIRST_ATTEMPT_TIMEOUT, first_attempt_environment, capacity.first_attempt_concurrency),
                ("push_worker", WORKER_TIMEOUT, environment, capacity.push_concurrency),
            )
        }
        self.fanout, self.first_attempt, self.worker = made["fanout"], made["first_attempt"], made["push_worker"]
        # Stream batches that failed every retry: their shard, sequence numbers and error, kept 14 days.
        self.fanout_failures = sqs.Queue(
            self, "FanoutFailures", retention_period=Duration.days(14), enforce_ssl=True,
            encryption=encryption.queue_encryption(),
        )  # fmt: skip
        for queue in (self.dead_letters, self.queue, self.fanout_failures):
            encryption.encrypt_queue(queue)
        self.fanout.add_event_source(
            sources.DynamoEventSource(
                topic_messages,
                starting_position=lambda_.StartingPosition.LATEST,
                batch_size=10,
                # Several batches of one shard in flight at once: one slow endpoint delays its own batch only.
                parallelization_factor=capacity.fanout_parallelization,
                bisect_batch_on_error=True,
                retry_attempts=FANOUT_RETRY_ATTEMPTS,
                max_record_age=FANOUT_MAX_RECORD_AGE,
                on_failure=sources.SqsDlq(self.fanout_failures),
                report_batch_item_failures=True,
                filters=[lambda_.FilterCriteria.filter({"eventName": lambda_.FilterRule.is_equal("INSERT")})],
            )
        )
        self.worker.add_event_source(
            sources.SqsEventSource(
                self.queue, batch_size=10, report_batch_item_failures=True, max_concurrency=capacity.push_concurrency
            )
        )
        # The fan-out only sends to the first-attempt queue (SendMessageBatch is authorized as SendMessage); the
        # event source lets the first-attempt function receive and delete, which it also does itself.
        self.fanout.add_to_role_policy(
            iam.PolicyStatement(actions=["sqs:SendMessage"], resources=[self.first_attempts.queue_arn])
        )
        self.first_attempt.add_event_source(
            sources.SqsEventSource(
                self.first_attempts,
                batch_size=10,
                report_batch_item_failures=True,
                max_concurrency=capacity.first_attempt_concurrency,
            )
        )
        for starter in (self.fanout, self.first_attempt):
            self.state_machine.grant_start_execution(starter)
        self.worker.add_to_role_policy(iam.PolicyStatement(actions=TASK_RESPONSE_ACTIONS, resources=["*"]))
        for function in (self.fanout, self.first_attempt, self.worker):
            grant_mail_and_sms(function)
            self.targets.grant(function)


def first_attempt_queues(scope: Construct, encryption: Encryption) -> tuple[sqs.Queue, sqs.Queue]:
    """The FIFO queue of first attempts (`mnsd.push.attempt_queue`) and its dead-letter queue.

    Deduplicated by the id the fan-out gives (the delivery), not by content; high-throughput FIFO: the
    deduplication and the throughput limits are per message group, i.e. per subscription. A message the
    first-attempt function fails five times (the retry workflow cannot be started) goes to the dead-letter
    queue, which raises an alarm."""
    dead_letters = sqs.Queue(
        scope, "FirstAttemptDeadLetters", fifo=True, retention_period=Duration.days(14), enforce_ssl=True,
        encryption=encryption.queue_encryption(),
    )  # fmt: skip
    queue = sqs.Queue(
        scope,
        "FirstAttempts",
        fifo=True,
        content_based_deduplication=False,
        deduplication_scope=sqs.DeduplicationScope.MESSAGE_GROUP,
        fifo_throughput_limit=sqs.FifoThroughputLimit.PER_MESSAGE_GROUP_ID,
        visibility_timeout=FIRST_ATTEMPT_VISIBILITY,
        retention_period=FIRST_ATTEMPT_RETENTION,
        enforce_ssl=True,
        encryption=encryption.queue_encryption(),
        dead_letter_queue=sqs.DeadLetterQueue(queue=dead_letters, max_receive_count=5),
    )
    for each in (dead_letters, queue):
        encryption.encrypt_queue(each)
    return queue, dead_letters


def grant_mail_and_sms(function: lambda_.Function) -> None:
    """Mail endpoints send through the account's SES identities; SMS endpoints publish to phone numbers.

    An SMS publish names no resource, so `sns:Publish` is allowed on everything *but* SNS ARNs: the
    function can text a phone number and cannot publish to any topic.
    """
    stack = Stack.of(function)
    function.add_to_role_policy(
        iam.PolicyStatement(
            actions=["ses:SendEmail"],
            resources=[f"arn:{stack.partition}:ses:{stack.region}:{stack.account}:identity/*"],
        )
    )
    function.add_to_role_policy(
        iam.PolicyStatement(actions=["sns:Publish"], not_resources=[f"arn:{stack.partition}:sns:*:*:*"])
    )
