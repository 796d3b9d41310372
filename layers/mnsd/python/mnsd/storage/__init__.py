"""The storage engines, adapters of the storage ports (`mnsd.model.ports`): `mnsd.storage.dynamodb` (AWS, and moto
in tests and `MNS_ENGINE=moto`) and `mnsd.storage.sqlite` (the local runtime's embedded engine). Only an engine's own
modules speak its database (boto3 DynamoDB calls, SQL); the services see entities (`Message`, `Queue`, ...).

`Storage` is one engine's stores, as the services are built over them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mnsd.model.ports import (
    FifoMessageStore,
    MetaTable,
    OperationLogStore,
    RateCounter,
    SignatureNonces,
    StandardMessageStore,
    TopicMessageStore,
)
from mnsd.storage.nonces import ProcessNonces
from mnsd.storage.rates import ProcessRateCounter


@dataclass(frozen=True)
class Storage:
    """One engine's stores."""

    engine: str
    meta: MetaTable
    messages: StandardMessageStore  # standard queues' (and their receivers')
    fifo_messages: FifoMessageStore  # FIFO queues'
    topic_messages: TopicMessageStore
    log: OperationLogStore
    rates: RateCounter = field(default_factory=ProcessRateCounter, kw_only=True)  # requests per second, for limits
    nonces: SignatureNonces = field(default_factory=ProcessNonces, kw_only=True)  # the OpenAPI signatures' nonces
