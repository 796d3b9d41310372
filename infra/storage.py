"""S3: the analytics bucket (DynamoDB exports in, Glue output out) and the access log bucket beside it."""

from typing import Any

from aws_cdk import Duration, RemovalPolicy
from aws_cdk import aws_s3 as s3
from constructs import Construct

from infra.encryption import Encryption

EXPORTS_PREFIX = "exports/"
ANALYTICS_PREFIX = "analytics/"


def private_bucket(scope: Construct, id: str, **kwargs: Any) -> s3.Bucket:
    """Encrypted (SSE-S3 unless `kwargs` say otherwise), no public access, TLS only; kept when the stack is
    destroyed (it holds data)."""
    return s3.Bucket(
        scope,
        id,
        **{"encryption": s3.BucketEncryption.S3_MANAGED, **kwargs},
        block_public_access=s3.BlockPublicAccess.BLOCK_ALL,
        enforce_ssl=True,
        object_ownership=s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
        removal_policy=RemovalPolicy.RETAIN,
    )


class Buckets(Construct):
    """`data`: `exports/` (DynamoDB table exports, removed after 30 days) and `analytics/` (Parquet tables),
    under `encryption`'s key when there is one. The access log bucket stays SSE-S3: S3 delivers server access
    logs only to buckets whose default encryption is SSE-S3."""

    def __init__(self, scope: Construct, id: str, *, encryption: Encryption | None = None) -> None:
        super().__init__(scope, id)
        self.access_logs = private_bucket(
            self,
            "AccessLogs",
            lifecycle_rules=[s3.LifecycleRule(expiration=Duration.days(90))],
        )
        self.data = private_bucket(
            self,
            "Data",
            server_access_logs_bucket=self.access_logs,
            server_access_logs_prefix="data/",
            lifecycle_rules=[s3.LifecycleRule(prefix=EXPORTS_PREFIX, expiration=Duration.days(30))],
            **(encryption or Encryption()).bucket_encryption(),
        )
