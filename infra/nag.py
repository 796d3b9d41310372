"""cdk-nag (AwsSolutions) findings reviewed and accepted, each with its reason. Everything else must pass."""

from aws_cdk import Acknowledgment, Validations
from constructs import IConstruct

# (rule, reason) by the attribute of the stack holding the constructs they apply to (and all below them).
REVIEWED = {
    "api": [
        (
            "AwsSolutions-APIG4",
            "MNS clients authenticate with MNS request signatures (Authorization: MNS keyid:signature), which "
            "the route functions verify; API Gateway has no authorizer for that scheme, and an authorizer's "
            "refusal would reach clients in a non-MNS shape.",
        ),
    ],
    "functions": [
        (
            "AwsSolutions-IAM5[Resource::*]",
            "Only xray:PutTraceSegments and xray:PutTelemetryRecords (active tracing), which support no "
            "resource-level permissions; every other statement names its table, secret or log group.",
        ),
        (
            "AwsSolutions-L1",
            "Python 3.11 on purpose: the layer, the local runtime and the Glue 5.1 jobs share one Python version.",
        ),
    ],
    "secrets": [
        (
            "AwsSolutions-SMG4",
            "Access keys are rotated by the admin command (create a new key, then revoke the old one); the receipt "
            "key is not rotated automatically because that would invalidate every outstanding receipt handle.",
        ),
    ],
}


def acknowledge_reviewed_findings(stack: IConstruct) -> None:
    for attribute, findings in REVIEWED.items():
        for rule, reason in findings:
            Validations.of(getattr(stack, attribute)).acknowledge(Acknowledgment(id=rule, reason=reason))
