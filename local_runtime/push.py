"""Push delivery in the local runtime: the retry state machine on moto and the worker thread it talks to.

The state machine is `mnsd.push_workflow.definition`, the one the CDK app deploys; moto executes it
(Wait, Retry and all, in real time). Its attempts arrive on an SQS queue, as on AWS, where a thread
plays the push worker Lambda.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any

from local_runtime import moto_fixes
from mnsd.push_workflow import definition_json
from mnsd.services import Services

QUEUE_NAME = "mns-push-attempts"
STATE_MACHINE_NAME = "mns-push-retries"
LOCAL_ROLE_ARN = "arn:aws:iam::123456789012:role/mns-push-retries"
POLL_SECONDS = 0.05
IDLE_POLL_SECONDS = 0.5  # retries wait >= 1 s in the state machine: an idle worker need not poll faster


def create_push_workflow(clients: Callable[[str], Any]) -> tuple[str, str]:
    """(state machine ARN, push queue URL) of a new workflow on the embedded backend."""
    moto_fixes.apply()
    queue_url = clients("sqs").create_queue(QueueName=QUEUE_NAME)["QueueUrl"]
    arn = clients("stepfunctions").create_state_machine(
        name=STATE_MACHINE_NAME, definition=definition_json(queue_url), roleArn=LOCAL_ROLE_ARN
    )["stateMachineArn"]
    return arn, queue_url


class LocalPushWorker:
    """Receives the push queue's messages and handles each as the push worker Lambda would."""

    def __init__(self, services: Callable[[], Services], sqs: Any, queue_url: str) -> None:
        self.services = services
        self.sqs = sqs
        self.queue_url = queue_url
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="push-worker", daemon=True)

    def start(self) -> LocalPushWorker:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def _run(self) -> None:
        pause = POLL_SECONDS
        while not self._stop.is_set():
            try:
                messages = self.sqs.receive_message(QueueUrl=self.queue_url, MaxNumberOfMessages=10).get("Messages", [])
            except Exception:  # the backend is stopping
                return
            for message in messages:
                self._handle(message)
            if not messages:
                self._stop.wait(pause)
            pause = POLL_SECONDS if messages else min(IDLE_POLL_SECONDS, pause * 2)

    def _handle(self, message: dict[str, Any]) -> None:
        try:
            self.services().fanout().handle_task(json.loads(message["Body"]))
        except Exception as error:  # as Lambda would: the message stays and comes back
            print(f"push worker: {type(error).__name__}: {error}", flush=True)
            return
        self.sqs.delete_message(QueueUrl=self.queue_url, ReceiptHandle=message["ReceiptHandle"])
