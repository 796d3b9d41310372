"""The service graph: settings, keys, stores and domain services, built once per process."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from mnsd.accounts import KeyStore, StaticKeyStore
from mnsd.clock import Clock, SystemClock
from mnsd.queue_service import QueueService
from mnsd.receipts import ReceiptCodec
from mnsd.settings import Settings, get_settings
from mnsd.storage.messages import MessageStore
from mnsd.storage.meta import MetaStore


@dataclass
class Services:
    settings: Settings
    keys: KeyStore
    clock: Clock
    meta: MetaStore
    queues: QueueService


def build_services(
    settings: Settings,
    dynamodb: Any = None,
    clock: Clock | None = None,
    keys: KeyStore | None = None,
    notifier: Any = None,
) -> Services:
    if dynamodb is None:
        import boto3

        dynamodb = boto3.client("dynamodb")
    clock = clock or SystemClock()
    meta = MetaStore(dynamodb, settings.meta_table)
    messages = MessageStore(dynamodb, settings.message_table)
    queues = QueueService(meta, messages, ReceiptCodec(settings.receipt_secret), clock, settings, notifier)
    return Services(settings, keys or StaticKeyStore(settings.credentials), clock, meta, queues)


@lru_cache(maxsize=1)
def default_services() -> Services:
    """The process-wide services of a Lambda function, made on first use (never at import)."""
    return build_services(get_settings())
