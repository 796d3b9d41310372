"""Push endpoints in the cloud's own services: a Lambda function or an EventBridge bus, named by its ARN.

Endpoints are untrusted input: an ARN is accepted only in its exact shape (partition, region, a 12-digit account,
a function name with an optional version or alias, a bus name), only in the deployment's partition and region,
and only where the deployment's allow-list names it (`MNS_PUSH_LAMBDA_ARNS` / `MNS_PUSH_EVENT_BUS_ARNS`, the
stack's `-c pushLambdaArns=...` / `-c pushEventBusArns=...`: the same list the stack grants its invoke permission
on). The list is empty by default: such subscriptions are then refused at Subscribe, saying why.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from mnsd.ground import errors
from mnsd.ground.settings import Settings

LAMBDA, EVENTBRIDGE = "lambda", "eventbridge"
_PARTITION = r"(?P<partition>aws|aws-cn|aws-us-gov)"
_REGION = r"(?P<region>[a-z]{2}(?:-[a-z]+)+-\d{1,2})"
_ACCOUNT = r"(?P<account>\d{12})"
# A function name (64 characters at most) with an optional version ($LATEST or digits) or alias.
_FUNCTION_ARN = re.compile(
    rf"arn:{_PARTITION}:lambda:{_REGION}:{_ACCOUNT}:function:(?P<name>[A-Za-z0-9_-]{{1,64}})"
    r"(?::(?P<qualifier>\$LATEST|[A-Za-z0-9_-]{1,128}))?\Z"
)
_BUS_ARN = re.compile(rf"arn:{_PARTITION}:events:{_REGION}:{_ACCOUNT}:event-bus/(?P<name>[A-Za-z0-9._/-]{{1,256}})\Z")
# The partitions whose regions start so (every other region is in `aws`).
_PARTITIONS = (("cn-", "aws-cn"), ("us-gov-", "aws-us-gov"))
ALLOW_LIST_NAMES = {LAMBDA: "pushLambdaArns", EVENTBRIDGE: "pushEventBusArns"}


@dataclass(frozen=True)
class CloudTarget:
    """A Lambda function or EventBridge bus an endpoint names: `arn` as written, and its parts."""

    kind: str  # LAMBDA or EVENTBRIDGE
    arn: str
    partition: str
    region: str
    account_id: str
    name: str


def cloud_target(text: str) -> CloudTarget | None:
    """The function or bus `text` names, if it is such an ARN in its exact shape; None otherwise."""
    for kind, pattern in ((LAMBDA, _FUNCTION_ARN), (EVENTBRIDGE, _BUS_ARN)):
        if found := pattern.match(text):
            return CloudTarget(kind, text, found["partition"], found["region"], found["account"], found["name"])
    return None


def partition_of(region: str) -> str:
    return next((partition for prefix, partition in _PARTITIONS if region.startswith(prefix)), "aws")


def patterns(setting: str) -> tuple[str, ...]:
    """The ARNs (or patterns: `*` matches any run of characters) of an allow-list setting, comma-separated."""
    return tuple(part.strip() for part in setting.split(",") if part.strip())


def allow_list(settings: Settings, kind: str) -> tuple[str, ...]:
    """The deployment's allow-list of functions (LAMBDA) or buses (EVENTBRIDGE)."""
    return patterns(settings.push_lambda_arns if kind == LAMBDA else settings.push_event_bus_arns)


def allowed(arn: str, allow_list: tuple[str, ...]) -> bool:
    """Whether an allow-list names `arn` (exactly, or by a pattern's `*`)."""
    return any(re.fullmatch(".*".join(map(re.escape, pattern.split("*"))), arn) for pattern in allow_list)


def refusal(target: CloudTarget, aws_region: str, allow_list: tuple[str, ...]) -> str | None:
    """Why the deployment may not push to `target` (not its partition or region, not on its allow-list); None if
    it may. Checked at Subscribe and again at every attempt (the stack may have been redeployed without it)."""
    what = "function" if target.kind == LAMBDA else "event bus"
    if aws_region and (target.partition, target.region) != (partition_of(aws_region), aws_region):
        return f"The {what} must be in this deployment's region {aws_region} (partition {partition_of(aws_region)})."
    if not allowed(target.arn, allow_list):
        return (
            f"This deployment may not push to {what} {target.arn}: it is not on the stack's "
            f"{ALLOW_LIST_NAMES[target.kind]} list."
        )
    return None


def check_cloud_target(target: CloudTarget, settings: Settings) -> None:
    """At Subscribe: EndpointInvalid, saying why, for a target the deployment may not push to."""
    if why := refusal(target, settings.aws_region, allow_list(settings, target.kind)):
        raise errors.EndpointInvalid(why)
