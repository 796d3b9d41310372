"""The DynamoDB engine: the service's tables on AWS (and on moto in tests and `MNS_ENGINE=moto`).

Only this package calls DynamoDB; it turns its errors (ConditionalCheckFailed) into domain outcomes, and every call
goes through `retries.RetryingClient` (throttling, conflicts and lost answers handled by kind).
"""

from __future__ import annotations

from typing import Any

from mnsd.ground.clock import Clock, SystemClock
from mnsd.ground.settings import Settings
from mnsd.storage import Storage

ENGINE = "dynamodb"


def dynamodb_storage(client: Any, settings: Settings, clock: Clock | None = None) -> Storage:
    """The engine's stores (one message table: standard queues striped, FIFO queues by group; one `Placer` for both,
    which gives the ids of new messages and knows which leases the ready index keeps); `clock` times the placement
    of queues (growth, the send width, the ready index)."""
    from mnsd.storage.dynamodb.fifo.fifo_groups import FifoGroups
    from mnsd.storage.dynamodb.items.layout import MAX_STRIPES
    from mnsd.storage.dynamodb.placement.placer import Placer
    from mnsd.storage.dynamodb.placement.queue_records import Placements, QueueRecords
    from mnsd.storage.dynamodb.placement.stripes import Pressure, StripeGrowth
    from mnsd.storage.dynamodb.retries import RetryingClient, throttled_partitions
    from mnsd.storage.dynamodb.standard.striped import StripedMessageStore
    from mnsd.storage.dynamodb.tables.meta import DynamoMetaTable
    from mnsd.storage.dynamodb.tables.nonces import DynamoNonces
    from mnsd.storage.dynamodb.tables.oplog import DynamoOperationLog
    from mnsd.storage.dynamodb.tables.rates import DynamoRateCounter
    from mnsd.storage.dynamodb.tables.topic_messages import DynamoTopicMessageStore

    clock = clock or SystemClock()
    pressure = Pressure()

    def count_throttled(request: dict[str, Any]) -> None:
        for queue_id in throttled_partitions(settings.message_table, request):
            pressure.throttled(queue_id)

    client = RetryingClient(client, count_throttled)
    meta = QueueRecords(DynamoMetaTable(client, settings.meta_table), clock, settings.queue_stripes)
    growth = StripeGrowth(pressure, clock, min(settings.max_queue_stripes, MAX_STRIPES))
    placer = Placer(Placements(meta, settings.meta_cache_seconds), growth, clock, settings.index_settle_seconds)
    return Storage(
        engine=ENGINE,
        meta=meta,
        messages=StripedMessageStore(client, settings.message_table, placer, settings.packed_batches),
        fifo_messages=FifoGroups(client, settings.message_table, placer, settings.packed_batches),
        topic_messages=DynamoTopicMessageStore(client, settings.topic_message_table),
        log=DynamoOperationLog(client, settings.log_table),
        rates=DynamoRateCounter(client, settings.meta_table),
        nonces=DynamoNonces(client, settings.meta_table),
    )
