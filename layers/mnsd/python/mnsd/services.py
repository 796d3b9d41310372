"""The service graph: settings, keys, stores and domain services, built once per process."""

from __future__ import annotations

import dataclasses
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


def resolve_secrets(settings: Settings, secretsmanager: Any = None) -> Settings:
    """Settings with the receipt secret and access keys read from Secrets Manager where ARNs name them."""
    if not (settings.receipt_secret_arn or settings.credentials_secret_arn):
        return settings
    if secretsmanager is None:
        import boto3

        secretsmanager = boto3.client("secretsmanager")

    def read(arn: str, fallback: str) -> str:
        return str(secretsmanager.get_secret_value(SecretId=arn)["SecretString"]) if arn else fallback

    return dataclasses.replace(
        settings,
        receipt_secret=read(settings.receipt_secret_arn, settings.receipt_secret),
        credentials=read(settings.credentials_secret_arn, settings.credentials),
    )


@lru_cache(maxsize=1)
def default_services() -> Services:
    """The process-wide services of a Lambda function, made on first use (never at import)."""
    return build_services(resolve_secrets(get_settings()))
