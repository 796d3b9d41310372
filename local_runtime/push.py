"""Push delivery in the local runtime: the retry state machine on moto and the worker thread it talks to.

The state machine is `mnsd.push.workflow.definition`, the one the CDK app deploys; moto executes it
(Wait, Retry and all, in real time). Its attempts arrive on an SQS queue, as on AWS, where a thread
receives them and a pool of threads plays the push worker function's concurrent invocations.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from local_runtime import moto_fixes
from local_runtime.background import BackgroundLoop
from local_runtime.report import ErrorReport
from mnsd.ground.clock import Clock, SystemClock
from mnsd.push.workflow import ATTEMPT_TIMEOUT_SECONDS, TASK_HEARTBEAT_SECONDS, definition_json
from mnsd.services import Services

QUEUE_NAME = "mns-push-attempts"
STATE_MACHINE_NAME = "mns-push-retries"
LOCAL_ROLE_ARN = "arn:aws:iam::123456789012:role/mns-push-retries"
POLL_SECONDS = 0.05
# Attempts made at once, as concurrent invocations of the worker function would: a slow endpoint's
# retry holds one of them for at most the attempt's deadline.
WORKERS = 8
IDLE_POLL_SECONDS = 0.2  # an idle worker polls less (moto calls take the backend lock), a retry waits at most this
# Local only (tests, demos): the retry schedule's waits last this fraction of their seconds, e.g. 0.01 runs
# BACKOFF_RETRY's 10-20 s waits in 0.1-0.2 s. The state machine and its schedule are unchanged.
TIME_SCALE = "MNS_PUSH_TIME_SCALE"
WAIT_TICK_SECONDS = 0.05  # how often a Wait state on a clock other than the system's looks at it again


def time_scale(env: Mapping[str, str]) -> float:
    """The `MNS_PUSH_TIME_SCALE` of `env`: 1 (real time) unless set, else a fraction in (0, 1]."""
    text = env.get(TIME_SCALE, "").strip()
    if not text:
        return 1.0
    try:
        scale = float(text)
    except ValueError:
        scale = 0.0
    if not 0 < scale <= 1:
        raise ValueError(f"{TIME_SCALE} must be a number in (0, 1], not {text!r}")
    return scale


def clock_waits(clock: Clock, scale: float) -> None:
    """Make moto's Wait states and Retry intervals, process-wide, last `scale` times their seconds on `clock` (the
    system's, or a test's `FileClock`: a wait ends once the clock has passed it, however the clock got there)."""
    if scale == 1 and isinstance(clock, SystemClock):
        return
    from moto.stepfunctions.parser.asl.component.common.retry import retrier_decl
    from moto.stepfunctions.parser.asl.component.state.wait.wait_function.wait_function import WaitFunction

    class ClockTime:
        @staticmethod
        def sleep(seconds: float) -> None:
            clock.sleep(seconds * scale)

    def wait_interval(self: Any, env: Any, wait_seconds: float) -> None:
        until = clock.now() + wait_seconds * scale
        while (left := until - clock.now()) > 0:
            if env.program_state_event.wait(min(left, WAIT_TICK_SECONDS)):  # set when the execution stops
                return

    retrier_decl.time = ClockTime  # type: ignore[assignment]
    WaitFunction._wait_interval = wait_interval  # type: ignore[method-assign]


def create_push_workflow(
    clients: Callable[[str], Any], heartbeat_seconds: int = TASK_HEARTBEAT_SECONDS
) -> tuple[str, str]:
    """(state machine ARN, push queue URL) of a new workflow on the embedded backend."""
    moto_fixes.apply()
    queue_url = clients("sqs").create_queue(
        QueueName=QUEUE_NAME, Attributes={"VisibilityTimeout": str(ATTEMPT_TIMEOUT_SECONDS)}
    )["QueueUrl"]
    arn = clients("stepfunctions").create_state_machine(
        name=STATE_MACHINE_NAME,
        definition=definition_json(queue_url, heartbeat_seconds=heartbeat_seconds),
        roleArn=LOCAL_ROLE_ARN,
    )["stateMachineArn"]
    return arn, queue_url


class LocalPushWorker(BackgroundLoop):
    """Receives the push queue's messages and handles each as the push worker Lambda would."""

    def __init__(self, services: Callable[[], Services], sqs: Any, queue_url: str) -> None:
        self.services = services
        self.sqs = sqs
        self.queue_url = queue_url
        self._pool = ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="push-attempt")
        self._free = threading.Semaphore(WORKERS)
        self.errors = ErrorReport("push worker")
        super().__init__("push-worker")

    def stop(self) -> None:
        super().stop()
        self._pool.shutdown(wait=False, cancel_futures=True)

    def _run(self) -> None:
        pause = POLL_SECONDS
        while not self._stop.is_set():
            free = 0
            while free < 10 and self._free.acquire(timeout=0 if free else POLL_SECONDS):
                free += 1
            if not free:
                continue
            try:
                messages = self.sqs.receive_message(QueueUrl=self.queue_url, MaxNumberOfMessages=free).get(
                    "Messages", []
                )
            except Exception:  # the backend is stopping
                return
            for message in messages:
                self._pool.submit(self._handle_and_free, message)
            for _ in range(free - len(messages)):
                self._free.release()
            if not messages:
                self._stop.wait(pause)
            pause = POLL_SECONDS if messages else min(IDLE_POLL_SECONDS, pause * 2)

    def _handle_and_free(self, message: dict[str, Any]) -> None:
        try:
            self._handle(message)
        finally:
            self._free.release()

    def _handle(self, message: dict[str, Any]) -> None:
        try:
            self.services().push().retry_worker.handle_task(json.loads(message["Body"]))
        except Exception as error:  # as Lambda would: the message stays and comes back
            self.errors.failed(error)
            return
        self.errors.succeeded()
        self.sqs.delete_message(QueueUrl=self.queue_url, ReceiptHandle=message["ReceiptHandle"])
