"""The push retry strategies, as one Step Functions state machine, and the worker its attempts go to.

The first delivery attempt happens at fan-out, with no execution (most pushes succeed at once, and an
execution costs transitions). Only a failed first attempt starts an execution, which runs the
subscription's NotifyStrategy:

- BACKOFF_RETRY: 3 retries, each after a wait drawn uniformly from 10..20 s (a Wait whose seconds
  come from `States.MathRandom`; Retry's jitter cannot express a 10 s floor).
- EXPONENTIAL_DECAY_RETRY: 176 retries, waits 1, 2, 4, ... 256, then 512 s each (one day in all): a
  1 s Wait, then the attempt Task's own Retry (2 s doubling, capped at 512 s, 175 more attempts).

Every retry is an SQS `sendMessage.waitForTaskToken` Task: the worker (an SQS-triggered Lambda on
AWS, a thread of the local runtime) makes the attempt and answers with SendTaskSuccess or
SendTaskFailure. When the strategy is exhausted the `Drop` state tells the worker, which records the
drop. The same definition runs on AWS and, executed by moto, locally and in the tests.

A retry may wait in the push queue (a busy or throttled worker, a crash and SQS's redelivery). The
Task waits `TASK_HEARTBEAT_SECONDS` for a sign of life: the worker sends a heartbeat first and makes
the attempt only if Step Functions accepts it. A refused heartbeat means the Task timed out while its
message waited, and the execution has scheduled the next retry already: attempting this one too would
push twice (a delivered retry rescheduled). An accepted heartbeat gives the attempt at least
`TASK_TIMEOUT_SECONDS - TASK_HEARTBEAT_SECONDS` to answer, far beyond the 5 s an attempt may take.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from mnsd.model.topics import BACKOFF_RETRY, EXPONENTIAL_DECAY_RETRY, Subscription, TopicMessage

BACKOFF_RETRIES = 3
BACKOFF_WAIT_SECONDS = (10, 20)  # inclusive
EXPONENTIAL_RETRIES = 176
EXPONENTIAL_FIRST_WAIT = 1
EXPONENTIAL_MAX_WAIT = 512
# The worker's budget for one message of the push queue (an attempt answers within 5 s): the infra
# derives the worker function's timeout and the queue's visibility from it.
ATTEMPT_TIMEOUT_SECONDS = 60
# How long a retry may wait for the worker before its Task times out (and the next retry is scheduled),
# and the Task's limit once the worker's heartbeat has been accepted.
TASK_HEARTBEAT_SECONDS = 120
TASK_TIMEOUT_SECONDS = TASK_HEARTBEAT_SECONDS + ATTEMPT_TIMEOUT_SECONDS
DELIVERY_FAILED = "DeliveryFailed"


def _attempt(
    queue_url: str, attempt_path: str, first_attempt: int, partition: str, heartbeat_seconds: int
) -> dict[str, Any]:
    return {
        "Type": "Task",
        "Resource": f"arn:{partition}:states:::sqs:sendMessage.waitForTaskToken",
        "Parameters": {
            "QueueUrl": queue_url,
            "MessageBody": {
                "delivery.$": "$.delivery",
                "token.$": "$$.Task.Token",
                "retry.$": attempt_path,
                "first_retry_attempt": first_attempt,
            },
        },
        "HeartbeatSeconds": heartbeat_seconds,
        "TimeoutSeconds": heartbeat_seconds + ATTEMPT_TIMEOUT_SECONDS,
        "ResultPath": None,
    }


def definition(
    queue_url: str, partition: str = "aws", heartbeat_seconds: int = TASK_HEARTBEAT_SECONDS
) -> dict[str, Any]:
    """The state machine; its input is `{"strategy": ..., "retries": 0, "delivery": {...}}`.

    `partition` names Step Functions' service integrations (the deployed stack's own: aws-cn, aws-us-gov, ...).
    """
    low, high = BACKOFF_WAIT_SECONDS
    catch_to = lambda state: [{"ErrorEquals": ["States.ALL"], "ResultPath": "$.error", "Next": state}]  # noqa: E731
    return {
        "Comment": "MNS push retries (NotifyStrategy) after a failed first attempt",
        "StartAt": "Strategy",
        "States": {
            "Strategy": {
                "Type": "Choice",
                "Choices": [
                    {"Variable": "$.strategy", "StringEquals": EXPONENTIAL_DECAY_RETRY, "Next": "ExponentialFirstWait"}
                ],
                "Default": "BackoffDraw",
            },
            "BackoffDraw": {
                "Type": "Pass",
                "Parameters": {
                    "strategy.$": "$.strategy",
                    "delivery.$": "$.delivery",
                    "retries.$": "States.MathAdd($.retries, 1)",
                    # Both bounds are inclusive in moto (LocalStack's port); were AWS's end exclusive,
                    # the draws would still lie in 10..20.
                    "wait.$": f"States.MathRandom({low}, {high})",
                },
                "Next": "BackoffWait",
            },
            "BackoffWait": {"Type": "Wait", "SecondsPath": "$.wait", "Next": "BackoffAttempt"},
            "BackoffAttempt": {
                **_attempt(queue_url, "$.retries", 0, partition, heartbeat_seconds),
                "Catch": catch_to("BackoffMore"),
                "End": True,
            },
            "BackoffMore": {
                "Type": "Choice",
                "Choices": [{"Variable": "$.retries", "NumericLessThan": BACKOFF_RETRIES, "Next": "BackoffDraw"}],
                "Default": "Drop",
            },
            "ExponentialFirstWait": {"Type": "Wait", "Seconds": EXPONENTIAL_FIRST_WAIT, "Next": "ExponentialAttempt"},
            "ExponentialAttempt": {
                **_attempt(queue_url, "$$.State.RetryCount", 1, partition, heartbeat_seconds),
                "Retry": [
                    {
                        "ErrorEquals": ["States.ALL"],
                        "IntervalSeconds": EXPONENTIAL_FIRST_WAIT * 2,
                        "BackoffRate": 2,
                        "MaxDelaySeconds": EXPONENTIAL_MAX_WAIT,
                        "MaxAttempts": EXPONENTIAL_RETRIES - 1,
                    }
                ],
                "Catch": catch_to("Drop"),
                "End": True,
            },
            "Drop": {
                "Type": "Task",
                "Resource": f"arn:{partition}:states:::sqs:sendMessage",
                "Parameters": {"QueueUrl": queue_url, "MessageBody": {"delivery.$": "$.delivery", "drop": True}},
                "End": True,
            },
        },
    }


def definition_json(queue_url: str, partition: str = "aws", heartbeat_seconds: int = TASK_HEARTBEAT_SECONDS) -> str:
    return json.dumps(definition(queue_url, partition, heartbeat_seconds), indent=2)


def execution_input(strategy: str, delivery: dict[str, Any]) -> str:
    return json.dumps(
        {
            "strategy": strategy if strategy == EXPONENTIAL_DECAY_RETRY else BACKOFF_RETRY,
            "retries": 0,
            "delivery": delivery,
        }
    )


def attempt_number(task: dict[str, Any]) -> int:
    """The 1-based attempt a worker task is (attempt 1 was made at fan-out)."""
    return 1 + int(task.get("retry", 0)) + int(task.get("first_retry_attempt", 0))


def delivery_reference(subscription: Subscription, message: TopicMessage) -> dict[str, str]:
    """What a retry needs to find its message and subscription again (both are re-read per attempt)."""
    return {
        "account": message.account_id,
        "topic": message.topic_name,
        "topic_id": message.topic_id,
        "message_id": message.message_id,
        "subscription": subscription.name,
        "publish_time": str(message.publish_time),
    }


def retry_suffix(account_id: str, topic_name: str, subscription_name: str) -> str:
    """The 16 hex digits that end the name of every retry execution of one subscription: a hash of (account, topic,
    subscription), so that the metrics sampler attributes the running executions it lists to their subscription
    (`mnsd.monitoring.retries`). Names hold no newline: the parts cannot run into each other."""
    key = "\n".join((account_id, topic_name, subscription_name))
    return hashlib.sha1(key.encode("utf-8")).hexdigest()[:16]


def subscription_suffix(subscription: Subscription) -> str:
    return retry_suffix(subscription.account_id, subscription.topic_name, subscription.name)


def suffix_of(name: str) -> str:
    """The subscription's suffix of an execution name (`execution_name`)."""
    return name.rsplit("-", 1)[-1]


def execution_name(subscription: Subscription, message: TopicMessage) -> str:
    """One execution per (message, subscription): a re-delivered stream record cannot start a second. The message id
    (about 40 characters, `new_message_id`) and the subscription's suffix: about 57, within Step Functions' 80."""
    return f"{message.message_id}-{subscription_suffix(subscription)}"
