"""DynamoDB storage. Only this package talks to DynamoDB; it turns its errors into domain outcomes."""

from botocore.exceptions import ClientError


def condition_failed(exc: ClientError) -> bool:
    """Whether a write was refused because its ConditionExpression did not hold."""
    return bool(exc.response.get("Error", {}).get("Code") == "ConditionalCheckFailedException")
