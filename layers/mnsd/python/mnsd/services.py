"""The service graph: settings, keys, stores and domain services, built once per process."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, TypedDict

from mnsd.access.authorizer import Authorizer
from mnsd.access.keys import (
    CombinedKeyStore,
    KeysFileStore,
    KeyStore,
    RefreshingKeyStore,
    StaticKeyStore,
)
from mnsd.access.resources import CatalogPolicies
from mnsd.access.tokens import SecurityTokens
from mnsd.control.accounts import AccountService
from mnsd.control.catalog import Catalog
from mnsd.control.endpoint_acl import EndpointService
from mnsd.control.limits import Limits
from mnsd.control.registry import Kind, Registry
from mnsd.ground.clock import Clock, SystemClock
from mnsd.ground.errors import QUEUE_REFUSALS, TOPIC_REFUSALS
from mnsd.ground.settings import Settings, get_settings
from mnsd.log.oplog import QueueEventLog
from mnsd.metrics import MetricsSink, NoMetrics
from mnsd.metrics.cloudwatch import CloudWatchMinutes
from mnsd.metrics.emf import EmfMetrics
from mnsd.metrics.minutes import MinuteHistory, NoMinutes
from mnsd.model.names import check_queue_name, check_topic_name
from mnsd.model.queues import Queue
from mnsd.model.topics import Topic
from mnsd.push.assembly import Push, build_push
from mnsd.push.delivery import QueueEndpoints
from mnsd.push.fanout import Fanout
from mnsd.queues.activity import QueueActivity
from mnsd.queues.addresses import QueueAddresses
from mnsd.queues.arrivals import Arrivals
from mnsd.queues.control import QueueControl
from mnsd.queues.dead_letters import DeadLetterService
from mnsd.queues.dlq_targets import DeadLetterTargets
from mnsd.queues.messages import MessageService
from mnsd.queues.notifier import Notifier, PollingNotifier
from mnsd.queues.receipts import ReceiptCodec
from mnsd.queues.receivers import ReceiverService
from mnsd.queues.stores import MessageStores
from mnsd.storage import Storage
from mnsd.topics.service import Dispatcher, StreamDispatcher, TopicService

# Every AWS client of a function: botocore's own retries (adaptive: throttling and transient errors, with a
# client-side rate limiter) and timeouts such that all attempts of one call end within the shortest function
# timeout (10 s): 3 x (1 s connect + 2 s read) = 9 s, so a stuck call fails in the handler, never by a Lambda kill.
CLIENT_RETRIES = {"mode": "adaptive", "total_max_attempts": 3}
CLIENT_TIMEOUTS = {"connect_timeout": 1, "read_timeout": 2}
# The DynamoDB engine's client tries each call once: the engine retries by the outcome's kind, within the request's
# budget (`mnsd.storage.dynamodb.retries`).
ENGINE_CLIENT = "dynamodb"
ENGINE_RETRIES = {"mode": "standard", "total_max_attempts": 1}


# Pushes to Lambda functions and EventBridge buses (`mnsd.push.cloud_delivery`): one try within the attempt's 5 s (a
# function still running then is a failed attempt, as a slow HTTP endpoint is); the retry strategy retries.
PUSH_TARGET_CLIENTS = ("lambda", "events")
PUSH_TARGET_TIMEOUTS = {"connect_timeout": 1, "read_timeout": 5}


def client_config(max_pool_connections: int = 10, service: str = "") -> Any:
    """The botocore `Config` a client of `service` is made with (botocore imported here, never at import); a client
    used by more threads at once than botocore's default 10 connections asks for more."""
    from botocore.config import Config

    if service in PUSH_TARGET_CLIENTS:
        retries, timeouts = ENGINE_RETRIES, PUSH_TARGET_TIMEOUTS
    else:
        retries, timeouts = (ENGINE_RETRIES if service == ENGINE_CLIENT else CLIENT_RETRIES), CLIENT_TIMEOUTS
    return Config(retries=dict(retries), max_pool_connections=max_pool_connections, **timeouts)


def boto3_clients() -> Callable[[str], Any]:
    """A factory of boto3 clients, each made once, on first use (cold starts pay only for what they use)."""

    def client(name: str) -> Any:
        import boto3

        return boto3.client(name, config=client_config(service=name))

    return lru_cache(maxsize=None)(client)


@dataclass(kw_only=True)
class Services:
    settings: Settings
    keys: KeyStore
    clock: Clock
    storage: Storage
    catalog: Catalog
    queues: QueueControl  # queue records
    messages: MessageService  # a queue's (or receiver's) messages
    dead_letters: DeadLetterService  # dead letters, redrive, rewind
    receivers: ReceiverService
    addresses: QueueAddresses  # what a request's queue path names: a queue, or a receiver
    topics: TopicService
    clients: Callable[[str], Any]
    accounts: AccountService
    authorizer: Authorizer
    tokens: SecurityTokens  # temporary credentials, sealed with a key derived from the receipt secret
    limits: Limits
    metrics: MetricsSink = field(default_factory=NoMetrics)  # what the services count (`mnsd.metrics`)
    minutes: MinuteHistory = field(default_factory=NoMinutes)  # a queue's last hour by minute (`mnsd.metrics.minutes`)
    _push: Push | None = field(default=None, repr=False)
    _endpoints: EndpointService | None = field(default=None, repr=False)
    _queue_events: QueueEventLog | None = field(default=None, repr=False)

    def queue_events(self) -> QueueEventLog:
        if self._queue_events is None:
            self._queue_events = QueueEventLog(self.catalog, self.storage.log)
        return self._queue_events

    @property
    def endpoints(self) -> EndpointService:
        """The accounts' endpoints and their source-address allow-lists (`mnsd.control.endpoint_acl`)."""
        if self._endpoints is None:
            self._endpoints = EndpointService(self.catalog)
        return self._endpoints

    def push(self) -> Push:
        """Delivery: built on first use, by the functions that deliver (fan-out, push worker)."""
        if self._push is None:
            self._push = build_push(
                settings=self.settings,
                topics=self.topics,
                messages=self.storage.topic_messages,
                queues=QueueEndpoints(self.addresses, self.messages),
                dead_letter_queues=self.dead_letters,
                oplog=self.storage.log,
                clock=self.clock,
                clients=self.clients,
                grants=self.authorizer,
                metrics=self.metrics,
            )
        return self._push

    def fanout(self) -> Fanout:
        return self.push().fanout


class QueueParts(TypedDict):
    """What the services over queues' records and their messages stand on (`QueueControl`, `DeadLetterService`),
    named once as they are built."""

    catalog: Catalog
    messages: MessageStores
    clock: Clock
    settings: Settings


def build_services(
    settings: Settings,
    dynamodb: Any = None,
    clock: Clock | None = None,
    storage: Storage | None = None,
    keys: KeyStore | None = None,
    notifier: Notifier | None = None,
    dispatcher: Dispatcher | None = None,
    clients: Callable[[str], Any] | None = None,
    metrics: MetricsSink | None = None,
    minutes: MinuteHistory | None = None,
) -> Services:
    """The services over `storage`, or else over DynamoDB (`dynamodb`, else a boto3 client); counting into
    `metrics` (none by default), answering a queue's last hour by minute from `minutes` (zeros by default)."""
    clients = clients or boto3_clients()
    metrics = metrics or NoMetrics()
    clock = clock or SystemClock()
    if storage is None:
        from mnsd.storage.dynamodb import dynamodb_storage

        storage = dynamodb_storage(dynamodb or clients("dynamodb"), settings, clock)
    catalog = Catalog(storage.meta, clock, settings.meta_cache_seconds)
    receipts = ReceiptCodec(settings.receipt_secret)
    authorizer = Authorizer(CatalogPolicies(catalog), settings.region)
    limits = Limits(storage.rates, clock, settings.account_requests_per_second)
    waits = tier_wakes(settings, notifier or PollingNotifier(clock))
    queue_records = Registry(Kind(check_queue_name, catalog.queues, settings.max_queues, QUEUE_REFUSALS, Queue), clock)
    dlq_targets = DeadLetterTargets(catalog)
    stores = MessageStores(standard=storage.messages, fifo=storage.fifo_messages)
    receivers = ReceiverService(
        catalog=catalog, messages=stores, clock=clock, notifier=waits, registry=queue_records, dlq_targets=dlq_targets
    )
    addresses = QueueAddresses(registry=queue_records, catalog=catalog, receivers=receivers)
    activity = QueueActivity(metrics)
    arrivals = Arrivals(messages=stores, notifier=waits, receivers=receivers, activity=activity)
    parts = QueueParts(catalog=catalog, messages=stores, clock=clock, settings=settings)
    queues = QueueControl(**parts, registry=queue_records, receivers=receivers, dlq_targets=dlq_targets)
    dead_letters = DeadLetterService(
        **parts, arrivals=arrivals, notifier=waits, activity=activity, registry=queue_records, addresses=addresses
    )
    messages = MessageService(
        messages=stores,
        receipts=receipts,
        clock=clock,
        settings=settings,
        notifier=waits,
        arrivals=arrivals,
        dead_letters=dead_letters,
        activity=activity,
        limits=limits,
    )
    topic_records = Registry(Kind(check_topic_name, catalog.topics, settings.max_topics, TOPIC_REFUSALS, Topic), clock)
    topics = TopicService(
        catalog=catalog,
        messages=storage.topic_messages,
        clock=clock,
        settings=settings,
        dispatcher=dispatcher or StreamDispatcher(),
        registry=topic_records,
        grants=authorizer,
        metrics=metrics,
    )
    return Services(
        settings=settings,
        keys=keys or key_store(settings, clients, clock),
        clock=clock,
        storage=storage,
        catalog=catalog,
        queues=queues,
        messages=messages,
        dead_letters=dead_letters,
        receivers=receivers,
        addresses=addresses,
        topics=topics,
        clients=clients,
        accounts=AccountService(catalog),
        authorizer=authorizer,
        tokens=SecurityTokens(settings.receipt_secret),
        limits=limits,
        metrics=metrics,
        minutes=minutes or NoMinutes(),
    )


def tier_wakes(settings: Settings, notifier: Notifier) -> Notifier:
    """`notifier`, telling the wait tier too where the settings name its wake endpoint (`mnsd.waiting`)."""
    if not settings.wait_tier_wake_url:
        return notifier
    from mnsd.waiting.wakes import KeptAlivePost, TierWakes, aws_signer

    url = settings.wait_tier_wake_url
    return TierWakes(notifier, KeptAlivePost(url, aws_signer() if ".execute-api." in url else None))


def key_store(settings: Settings, clients: Callable[[str], Any], clock: Clock) -> KeyStore:
    """The access keys: from the Secrets Manager secret the settings name (re-read every minute), else the
    settings' (`MNS_CREDENTIALS`) and the keys file's (`MNS_KEYS_FILE`, re-read when it changes)."""
    if not settings.credentials_secret_arn:
        static = StaticKeyStore(settings.credentials)
        return CombinedKeyStore(static, KeysFileStore(settings.keys_file, clock.now)) if settings.keys_file else static
    secretsmanager = clients("secretsmanager")
    return RefreshingKeyStore(
        lambda: str(secretsmanager.get_secret_value(SecretId=settings.credentials_secret_arn)["SecretString"]),
        clock.now,
    )


def resolve_secrets(settings: Settings, secretsmanager: Any = None) -> Settings:
    """Settings with the receipt secret and push signing key read from Secrets Manager where ARNs name them.

    (The access keys are read by `key_store`, which reads them again as they age.)
    """
    arns = (settings.receipt_secret_arn, settings.signing_key_secret_arn, settings.wait_tier_key_secret_arn)
    if not any(arns):
        return settings
    if secretsmanager is None:
        import boto3

        secretsmanager = boto3.client("secretsmanager", config=client_config())

    def read(arn: str, fallback: str) -> str:
        return str(secretsmanager.get_secret_value(SecretId=arn)["SecretString"]) if arn else fallback

    return dataclasses.replace(
        settings,
        receipt_secret=read(settings.receipt_secret_arn, settings.receipt_secret),
        signing_key=read(settings.signing_key_secret_arn, settings.signing_key),
        wait_tier_key=read(settings.wait_tier_key_secret_arn, settings.wait_tier_key),
    )


@lru_cache(maxsize=1)
def default_services() -> Services:
    """The process-wide services of a Lambda function, made on first use (never at import); their counts go out
    as EMF lines at the end of each invocation, for the queues and topics monitored (`mnsd.metrics.monitored`), and a
    queue's minutes are read back from CloudWatch."""
    settings = resolve_secrets(get_settings())
    clients = boto3_clients()
    return build_services(
        settings,
        clients=clients,
        metrics=EmfMetrics(default=settings.metrics_default),
        minutes=CloudWatchMinutes(clients),
    )
