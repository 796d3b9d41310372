"""Where moto's Step Functions differ from AWS in a way the push workflow depends on, made to match AWS.

moto issues one task token per state and keeps it across the state's Retry attempts, with the
first attempt's outcome attached: a retried `.waitForTaskToken` Task then fails at once with the
stale outcome instead of waiting for its own answer. AWS issues a new token for every attempt.
`apply()` makes moto do the same, so the definition the CDK app deploys behaves locally as on AWS.

moto also keeps accepting heartbeats and answers for a token whose Task has ended (timed out, or
answered) while the execution runs on; AWS refuses them (TaskTimedOut, TaskDoesNotExist), and the
push worker relies on that refusal to leave a stale retry unattempted. `apply()` marks ended tasks.
"""

from __future__ import annotations

from typing import Any

_applied = False


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
    _applied = True


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
