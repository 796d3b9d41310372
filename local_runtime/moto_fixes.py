"""Where moto's Step Functions differ from AWS in a way the push workflow depends on, made to match AWS.

moto issues one task token per state and keeps it across the state's Retry attempts, with the
first attempt's outcome attached: a retried `.waitForTaskToken` Task then fails at once with the
stale outcome instead of waiting for its own answer. AWS issues a new token for every attempt.
`apply()` makes moto do the same, so the definition the CDK app deploys behaves locally as on AWS.

moto also keeps accepting heartbeats and answers for a token whose Task has ended (timed out, or
answered) while the execution runs on; AWS refuses them (TaskTimedOut, TaskDoesNotExist), and the
push worker relies on that refusal to leave a stale retry unattempted. `apply()` marks ended tasks.

And moto refuses a heartbeat (InvalidToken) for a token whose Task has sent its SQS message but not yet
started its heartbeat clock: a worker quick enough (or an execution thread slow enough, on a loaded
machine) then takes a live retry for a stale one, skips it, and the Task waits out its heartbeat timeout.
AWS accepts a heartbeat as soon as the token is issued: `apply()` makes moto do the same.

And moto applies a TransactWriteItems again when it is sent again with the same `ClientRequestToken`; DynamoDB
applies it once (for 10 minutes) and answers the retry as it answered the first: the DynamoDB engine relies on that
when a transaction's answer was lost (`mnsd.storage.dynamodb.retries`). `apply()` makes moto do the same.

And moto backs up a table before a TransactWriteItems by a deep copy of the whole table once per item of the
transaction: a FIFO batch delete's or claim's transaction of 16 items copied a table of a few thousand items 16 times
(1.2 s a call with 50 queues of 16 messages waiting, 0.07 s on an empty table). `apply()` makes
it copy each table once per transaction, which is all its rollback restores.

`apply()` also applies `moto_speed`: moto's DynamoDB made cheaper with the same answers.
"""

from __future__ import annotations

import copy
import threading
import time
from typing import Any

from local_runtime import moto_speed

_applied = False
IDEMPOTENCY_SECONDS = 600  # how long DynamoDB remembers a transaction's ClientRequestToken


def apply() -> None:
    global _applied
    if _applied:
        return
    from moto.stepfunctions.parser.asl.component.state.exec.state_task.service.resource import ResourceCondition
    from moto.stepfunctions.parser.asl.component.state.exec.state_task.service.state_task_service_callback import (
        StateTaskServiceCallback,
    )

    original = StateTaskServiceCallback._eval_execution

    def eval_execution_with_a_token_per_attempt(self: Any, env: Any) -> None:
        retry_count = env.states.context_object.context_object_data["State"].get("RetryCount", 0)
        if (
            retry_count
            and self._is_integration_pattern()
            and ResourceCondition.WaitForTaskToken in self._supported_integration_patterns
        ):
            env.callback_pool_manager.add(env.states.context_object.update_task_token())
        original(self, env)

    StateTaskServiceCallback._eval_execution = eval_execution_with_a_token_per_attempt  # type: ignore[method-assign]
    _refuse_tokens_of_ended_tasks(StateTaskServiceCallback)
    _accept_heartbeats_once_issued()
    _apply_transactions_once()
    _back_up_each_table_once()
    moto_speed.apply()
    _applied = True


def _accept_heartbeats_once_issued() -> None:
    from moto.stepfunctions.parser.asl.eval.callback.callback import CallbackEndpoint

    original = CallbackEndpoint.notify_heartbeat

    def notify_heartbeat(self: Any) -> bool:
        original(self)
        return True  # issued and not ended (an ended Task's token is refused before this)

    CallbackEndpoint.notify_heartbeat = notify_heartbeat  # type: ignore[method-assign]


def _refuse_tokens_of_ended_tasks(callback_task: Any) -> None:
    from moto.stepfunctions.parser.asl.eval.callback.callback import (
        CallbackConsumerLeft,
        CallbackConsumerTimeout,
        CallbackOutcomeTimedOut,
        HeartbeatTimedOut,
    )

    original = callback_task._eval_wait_for_task_token

    def eval_wait_for_task_token(
        self: Any, env: Any, timeout_seconds: Any, callback_endpoint: Any, heartbeat_endpoint: Any
    ) -> Any:
        outcome = original(self, env, timeout_seconds, callback_endpoint, heartbeat_endpoint)
        timed_out = isinstance(outcome, CallbackOutcomeTimedOut | HeartbeatTimedOut)
        callback_endpoint.report(CallbackConsumerTimeout() if timed_out else CallbackConsumerLeft())
        return outcome

    callback_task._eval_wait_for_task_token = eval_wait_for_task_token


def _apply_transactions_once() -> None:
    from moto.dynamodb.responses import DynamoHandler

    original = DynamoHandler.transact_write_items
    answered: dict[str, tuple[float, Any]] = {}  # token: (when, the first answer)
    lock = threading.Lock()

    def transact_write_items(self: Any) -> Any:
        token = self.body.get("ClientRequestToken")
        now = time.monotonic()
        with lock:
            for old in [t for t, (when, _) in answered.items() if when < now - IDEMPOTENCY_SECONDS]:
                del answered[old]
            if token in answered:
                return answered[token][1]
        result = original(self)
        if token:
            with lock:
                answered[token] = (now, result)
        return result

    DynamoHandler.transact_write_items = transact_write_items  # type: ignore[method-assign]


def _back_up_each_table_once() -> None:
    from moto.dynamodb.models import DynamoDBBackend
    from moto.dynamodb.models.table import Table

    backups = threading.local()  # this thread's transaction's copies, by the table's id (None: not in one)
    original = DynamoDBBackend.transact_write_items

    def transact_write_items(self: Any, transact_items: list[dict[str, Any]]) -> None:
        backups.copies = {}
        try:
            original(self, transact_items)
        finally:
            backups.copies = None

    def deepcopy_once(self: Any, memo: dict[int, Any]) -> Any:
        copies = getattr(backups, "copies", None)
        if copies is not None and id(self) in copies:
            return copies[id(self)]
        cls: Any = type(self)
        new = cls.__new__(cls)
        memo[id(self)] = new
        for name, value in self.__dict__.items():
            new.__dict__[name] = copy.deepcopy(value, memo)
        if copies is not None:
            copies[id(self)] = new
        return new

    DynamoDBBackend.transact_write_items = transact_write_items  # type: ignore[method-assign]
    Table.__deepcopy__ = deepcopy_once  # type: ignore[attr-defined]
