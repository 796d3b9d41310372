"""Push delivery on AWS: fan-out from the topic message table's stream, retries in Step Functions.

    PublishMessage --put--> topic message table --stream (INSERT)--> fanout function
        first attempts; a failure starts one execution of the retry state machine
    state machine (mnsd.push_workflow, the definition the local runtime executes)
        --sqs:sendMessage.waitForTaskToken--> push queue --> push worker function
        (one retry, answered with SendTaskSuccess / SendTaskFailure; or a drop, recorded)

The signing key of HTTP pushes is made at deploy time by a custom resource and kept in Secrets
Manager; its public certificate is handed to the certificate route function through the environment.
"""

from __future__ import annotations

from collections.abc import Mapping

from aws_cdk import CustomResource, Duration, custom_resources
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_lambda_event_sources as sources
from aws_cdk import aws_logs as logs
from aws_cdk import aws_secretsmanager as secretsmanager
from aws_cdk import aws_sqs as sqs
from aws_cdk import aws_stepfunctions as sfn
from constructs import Construct

from mnsd import settings
from mnsd.push_workflow import ATTEMPT_TIMEOUT_SECONDS, definition_json

# The SES and SNS actions a delivery needs; SES identities and SMS destinations are the deployer's.
MAIL_AND_SMS_ACTIONS = ["ses:SendEmail", "sns:Publish"]


class SigningKey(Construct):
    """The RSA key that signs HTTP pushes (a secret) and its self-signed certificate (public)."""

    def __init__(self, scope: Construct, id: str, *, function_props: Mapping[str, object]) -> None:
        super().__init__(scope, id)
        self.secret = secretsmanager.Secret(self, "Key", description="MNS push signing key (PEM)")
        setup = lambda_.Function(self, "Setup", handler="signing_setup.handler", **function_props)  # type: ignore[arg-type]
        self.secret.grant_write(setup)
        provider = custom_resources.Provider(self, "Provider", on_event_handler=setup)
        resource = CustomResource(
            self, "Material", service_token=provider.service_token, properties={"SecretArn": self.secret.secret_arn}
        )
        self.certificate = resource.get_att_string("Certificate")


class PushDelivery(Construct):
    """The fan-out and push worker functions, the push queue and the retry state machine."""

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        function_props: Mapping[str, object],
        environment: Mapping[str, str],
        topic_messages: dynamodb.Table,
        meta: dynamodb.ITable,
        messages: dynamodb.ITable,
        log: dynamodb.ITable,
        signing_key: SigningKey,
    ) -> None:
        super().__init__(scope, id)
        dead_letters = sqs.Queue(
            self, "PushDeadLetters", retention_period=Duration.days(14), enforce_ssl=True,
            encryption=sqs.QueueEncryption.SQS_MANAGED,
        )  # fmt: skip
        self.queue = sqs.Queue(
            self,
            "PushAttempts",
            visibility_timeout=Duration.seconds(60),
            enforce_ssl=True,
            encryption=sqs.QueueEncryption.SQS_MANAGED,
            dead_letter_queue=sqs.DeadLetterQueue(queue=dead_letters, max_receive_count=5),
        )
        self.dead_letters = dead_letters
        self.state_machine = sfn.StateMachine(
            self,
            "Retries",
            definition_body=sfn.DefinitionBody.from_string(definition_json(self.queue.queue_url)),
            state_machine_type=sfn.StateMachineType.STANDARD,  # the longest schedule runs a day
            tracing_enabled=True,
            logs=sfn.LogOptions(
                destination=logs.LogGroup(self, "RetryLogs", retention=logs.RetentionDays.ONE_MONTH),
                level=sfn.LogLevel.ERROR,
            ),
        )
        self.queue.grant_send_messages(self.state_machine)

        env = {
            **environment,
            settings.PUSH_STATE_MACHINE_ARN: self.state_machine.state_machine_arn,
            settings.PUSH_QUEUE_URL: self.queue.queue_url,
            settings.SIGNING_KEY_SECRET_ARN: signing_key.secret.secret_arn,
        }
        self.fanout = lambda_.Function(
            self,
            "Fanout",
            handler="fanout.handler",
            environment=env,
            **function_props,  # type: ignore[arg-type]
        )
        self.worker = lambda_.Function(
            self,
            "Worker",
            handler="push_worker.handler",
            environment=env,
            **{**function_props, "timeout": Duration.seconds(ATTEMPT_TIMEOUT_SECONDS - 10)},  # type: ignore[arg-type]
        )
        self.fanout.add_event_source(
            sources.DynamoEventSource(
                topic_messages,
                starting_position=lambda_.StartingPosition.LATEST,
                batch_size=10,
                bisect_batch_on_error=True,
                retry_attempts=3,
                report_batch_item_failures=True,
                filters=[lambda_.FilterCriteria.filter({"eventName": lambda_.FilterRule.is_equal("INSERT")})],
            )
        )
        self.worker.add_event_source(sources.SqsEventSource(self.queue, batch_size=10, report_batch_item_failures=True))
        for function in (self.fanout, self.worker):
            meta.grant_read_data(function)  # topics, subscriptions, queues of queue endpoints
            messages.grant_write_data(function)  # queue endpoints: the queue service's send
            log.grant_write_data(function)
            signing_key.secret.grant_read(function)
            function.add_to_role_policy(iam.PolicyStatement(actions=MAIL_AND_SMS_ACTIONS, resources=["*"]))
        topic_messages.grant_read_data(self.worker)  # a retry re-reads its message
        self.state_machine.grant_start_execution(self.fanout)
        self.state_machine.grant_task_response(self.worker)
