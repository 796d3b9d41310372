from aws_cdk import RemovalPolicy
from aws_cdk import aws_dynamodb as dynamodb
from constructs import Construct

from local_runtime.tables import TTL_ATTRIBUTE


class Tables(Construct):
    """The control-plane table and the message table (TTL on `x`), on demand, with PITR for exports."""

    def __init__(self, scope: Construct, id: str, *, deletion_protection: bool) -> None:
        super().__init__(scope, id)
        key = dynamodb.Attribute(name="pk", type=dynamodb.AttributeType.STRING)
        sort = dynamodb.Attribute(name="sk", type=dynamodb.AttributeType.STRING)
        common = {
            "partition_key": key,
            "sort_key": sort,
            "billing_mode": dynamodb.BillingMode.PAY_PER_REQUEST,
            "point_in_time_recovery_specification": dynamodb.PointInTimeRecoverySpecification(
                point_in_time_recovery_enabled=True
            ),
            "deletion_protection": deletion_protection,
            "removal_policy": RemovalPolicy.RETAIN if deletion_protection else RemovalPolicy.DESTROY,
        }
        self.meta = dynamodb.Table(self, "Meta", **common)
        self.messages = dynamodb.Table(self, "Messages", time_to_live_attribute=TTL_ATTRIBUTE, **common)
