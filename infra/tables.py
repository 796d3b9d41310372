"""The DynamoDB tables, keyed as `local_runtime.tables.create_tables` makes them locally."""

from typing import Any

from aws_cdk import RemovalPolicy
from aws_cdk import aws_dynamodb as dynamodb
from constructs import Construct

from infra.encryption import Encryption
from infra.table_capacity import Provisioned, index_billing, table_billing
from local_runtime.tables import TTL_ATTRIBUTE
from mnsd.ground import settings
from mnsd.storage.dynamodb.items import layout
from mnsd.storage.dynamodb.tables.oplog import MESSAGE_INDEX

# The name each table has in `infra.grants.GRANTS`, and the variable that tells the functions its name.
TABLE_ENVIRONMENT = {
    "meta": settings.META_TABLE,
    "messages": settings.MESSAGE_TABLE,
    "topic_messages": settings.TOPIC_MESSAGE_TABLE,
    "log": settings.LOG_TABLE,
}


class Tables(Construct):
    """On demand (with `capacity`, provisioned with auto-scaling: `infra.table_capacity`), PITR on (exports need
    it), TTL on `x` everywhere but the control plane; the message table has the ready index (partition `pk`, sort
    `v`, a few small attributes projected).

    `by_name` maps the names used in `infra.grants.GRANTS` to the tables. Streams: the message table's feeds the
    operation log (old and new images), the topic message table's the fan-out (new images). The log table
    holds the operation log of LoggingEnabled queues and topics, exported for analytics. With `encryption`'s key,
    every table (and its stream) is encrypted under it.
    """

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        deletion_protection: bool,
        encryption: Encryption | None = None,
        capacity: Provisioned | None = None,
    ) -> None:
        super().__init__(scope, id)
        common: dict[str, Any] = {  # the constructor keywords every table shares
            "partition_key": dynamodb.Attribute(name="pk", type=dynamodb.AttributeType.STRING),
            "sort_key": dynamodb.Attribute(name="sk", type=dynamodb.AttributeType.STRING),
            **table_billing(capacity),
            "point_in_time_recovery_specification": dynamodb.PointInTimeRecoverySpecification(
                point_in_time_recovery_enabled=True
            ),
            "deletion_protection": deletion_protection,
            "removal_policy": RemovalPolicy.RETAIN if deletion_protection else RemovalPolicy.DESTROY,
        }
        # TTL removes the request counters kept beside the records (`mnsd.storage.dynamodb.tables.rates`).
        self.meta = dynamodb.Table(self, "Meta", time_to_live_attribute=TTL_ATTRIBUTE, **common)
        self.messages = dynamodb.Table(
            self,
            "Messages",
            time_to_live_attribute=TTL_ATTRIBUTE,
            stream=dynamodb.StreamViewType.NEW_AND_OLD_IMAGES,
            **common,
        )
        # Receives read what they can claim: the leases of an indexing queue by visibility time (`layout.READY_INDEX`).
        self.messages.add_global_secondary_index(
            index_name=layout.READY_INDEX,
            partition_key=dynamodb.Attribute(name=layout.PARTITION_KEY, type=dynamodb.AttributeType.STRING),
            sort_key=dynamodb.Attribute(name=layout.INDEX_KEY, type=dynamodb.AttributeType.NUMBER),
            projection_type=dynamodb.ProjectionType.INCLUDE,
            non_key_attributes=list(layout.INDEX_ATTRIBUTES),
            **index_billing(capacity),
        )
        self.topic_messages = dynamodb.Table(
            self,
            "TopicMessages",
            time_to_live_attribute=TTL_ATTRIBUTE,
            stream=dynamodb.StreamViewType.NEW_IMAGE,
            **common,
        )
        self.log = dynamodb.Table(self, "Log", time_to_live_attribute=TTL_ATTRIBUTE, **common)
        # A message's history (`GET /queues/{q}/messages/{id}/history`): its records by (message_id, pk), attributes
        # every item has always had, so DynamoDB fills the index with the items written before it too.
        self.log.add_global_secondary_index(
            index_name=MESSAGE_INDEX,
            partition_key=dynamodb.Attribute(name="message_id", type=dynamodb.AttributeType.STRING),
            sort_key=dynamodb.Attribute(name="pk", type=dynamodb.AttributeType.STRING),
            projection_type=dynamodb.ProjectionType.ALL,
            **index_billing(capacity),
        )
        self.by_name: dict[str, dynamodb.Table] = {
            "meta": self.meta,
            "messages": self.messages,
            "topic_messages": self.topic_messages,
            "log": self.log,
        }
        for table in self.by_name.values():  # and so their streams
            (encryption or Encryption()).encrypt_table(table)
            if capacity is not None:
                indexes = (layout.READY_INDEX,) if table is self.messages else ()
                capacity.scale(table, (MESSAGE_INDEX,) if table is self.log else indexes)

    def environment(self) -> dict[str, str]:
        """Every table's name in the variable the layer's settings read."""
        return {TABLE_ENVIRONMENT[name]: table.table_name for name, table in self.by_name.items()}
