"""The retry workflow as the push code sees it: a typed port, and its one implementation over boto3.

A token no longer awaited (the Task timed out, the execution ended) is no error for the caller: the
port answers False, and the execution went on without this attempt.
"""

from __future__ import annotations

from typing import Any, Protocol

from aws_lambda_powertools import Logger

# What Step Functions answers for a token it no longer waits on.
STALE_TOKEN_ERRORS = frozenset({"TaskTimedOut", "InvalidToken", "TaskDoesNotExist"})
logger = Logger(service="mns")


class RetryWorkflow(Protocol):
    def start(self, name: str, execution_input: str) -> bool:
        """Start an execution; False if one of that name exists already."""
        ...

    def heartbeat(self, token: str) -> bool:
        """Tell the waiting Task that its attempt begins; False if the token is no longer awaited."""
        ...

    def succeed(self, token: str, output: str) -> None: ...

    def fail(self, token: str, error: str, cause: str) -> None: ...


def _error_name(error: Exception) -> str:
    """The AWS error code of a boto3 error (modelled exceptions are named after it)."""
    return type(error).__name__


class StepFunctionsWorkflow:
    """`RetryWorkflow` over a boto3 Step Functions client and the retry state machine's ARN."""

    def __init__(self, client: Any, state_machine_arn: str) -> None:
        self.client = client
        self.state_machine_arn = state_machine_arn

    def start(self, name: str, execution_input: str) -> bool:
        try:
            self.client.start_execution(stateMachineArn=self.state_machine_arn, name=name, input=execution_input)
        except Exception as error:
            if _error_name(error) != "ExecutionAlreadyExists":
                raise
            return False
        return True

    def heartbeat(self, token: str) -> bool:
        try:
            self.client.send_task_heartbeat(taskToken=token)
        except Exception as error:
            if _error_name(error) not in STALE_TOKEN_ERRORS:
                raise
            return False
        return True

    def succeed(self, token: str, output: str) -> None:
        self._answer(self.client.send_task_success, taskToken=token, output=output)

    def fail(self, token: str, error: str, cause: str) -> None:
        self._answer(self.client.send_task_failure, taskToken=token, error=error, cause=cause)

    @staticmethod
    def _answer(send: Any, **arguments: str) -> None:
        """A refused answer for a stale token is logged: failing would only bring the message back to be
        attempted again."""
        try:
            send(**arguments)
        except Exception as error:
            if _error_name(error) not in STALE_TOKEN_ERRORS:
                raise
            logger.warning("task answer refused", extra={"error": _error_name(error)})
