"""Conditional writes: DynamoDB's refusal of a write whose condition did not hold, as an outcome."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from botocore.exceptions import ClientError

THROTTLES = frozenset({"ProvisionedThroughputExceededException", "ThrottlingException", "RequestLimitExceeded"})


def condition_failed(exc: ClientError) -> bool:
    """Whether a write was refused because its ConditionExpression did not hold."""
    return bool(exc.response.get("Error", {}).get("Code") == "ConditionalCheckFailedException")


def conditional(call: Callable[..., Any], **request: Any) -> dict[str, Any] | None:
    """A conditional write's response, or None when its condition did not hold."""
    try:
        return dict(call(**request))
    except ClientError as exc:
        if condition_failed(exc):
            return None
        raise
