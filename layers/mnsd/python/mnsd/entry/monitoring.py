"""The sampler's Lambda handler, run once a minute by an EventBridge rule: the retries pending of every subscription
of a monitored topic (`mnsd.monitoring.retries`), the gauges of every monitored queue and receiver, then the queues'
alarms (`mnsd.monitoring`). It serves no MNS call: it holds no access key.

Its own health goes out beside (namespace `MNS`, dimension `service=mns`): `QueuesSampled`, `QueuesNotSampled` (late
or failed: the stack alarms on it), `RetriesNotAllCounted` (1 when the bound of the running executions' listing
stopped it: the retries pending printed are short), `AlarmChangesPending`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from functools import lru_cache
from typing import Any

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import MetricUnit

from mnsd.access.keys import AccessKey
from mnsd.ground.clock import SystemClock
from mnsd.ground.settings import get_settings
from mnsd.metrics import monitored
from mnsd.metrics.emf import EmfMetrics
from mnsd.model.names import is_receiver_address
from mnsd.model.queues import Queue
from mnsd.monitoring.alarms import AlarmChanges, AlarmReconciler, CloudWatchAlarms
from mnsd.monitoring.retries import PendingRetries, RetryRun
from mnsd.monitoring.sampler import BacklogSampler, SamplerLimits, SampleRun
from mnsd.services import Services, boto3_clients, build_services, client_config

logger = Logger(service="mns")
metrics = Metrics(namespace="MNS", service="mns")

Handler = Callable[[dict[str, Any], Any], dict[str, Any]]


class NoKeys:
    """The sampler's `KeyStore`: it authenticates nothing."""

    def lookup(self, key_id: str) -> AccessKey | None:
        return None

    def keys_of(self, account_id: str) -> list[AccessKey]:
        return []


@dataclass
class Monitor:
    """One run: count the retries pending of the monitored topics' subscriptions; list every queue once; sample the
    monitored ones; reconcile the alarms of the queues."""

    services: Services
    sampler: BacklogSampler
    alarms: AlarmReconciler
    retries: PendingRetries | None = None

    def run(self) -> tuple[SampleRun, AlarmChanges, RetryRun]:
        default = self.services.settings.metrics_default
        retries = RetryRun(0, 0, False)
        if self.retries is not None:
            try:
                catalog = self.services.catalog
                accounts = sorted({*catalog.accounts_with_queues(), *catalog.accounts_with_subscriptions()})
                retries = self.retries.run(accounts, default)
            except Exception:  # throttled, unavailable: the queues' gauges and alarms still go out
                logger.exception("retries pending not counted")
                retries = RetryRun(0, 0, True)
        every = list(self.services.queues.every_queue())
        watched = [queue for queue in every if monitored(queue.attributes.metrics_chosen, default)]
        sampled = self.sampler.run(watched)
        queues: list[Queue] = [queue for queue in every if not is_receiver_address(queue.name)]
        return sampled, self.alarms.reconcile(queues), retries


@lru_cache(maxsize=1)
def default_monitor() -> Monitor:
    """The container's monitor, made on first use (never at import): its own DynamoDB client with a connection per
    reading thread, the EMF sink, and the sampler and reconciler whose state lasts as long as the container."""
    import boto3

    settings = get_settings()
    limits = SamplerLimits()
    clock = SystemClock()
    dynamodb = boto3.client("dynamodb", config=client_config(max_pool_connections=limits.workers, service="dynamodb"))
    sink = EmfMetrics(default=settings.metrics_default)
    services = build_services(settings, dynamodb=dynamodb, clock=clock, keys=NoKeys(), metrics=sink)
    store = CloudWatchAlarms(boto3_clients()("cloudwatch"), settings.alarm_prefix)
    reconciler = AlarmReconciler(store, settings.alarm_prefix, settings.alarm_topic_arn, clock)
    retries = PendingRetries(
        services.catalog, lambda: services.clients("stepfunctions"), settings.push_state_machine_arn, sink, clock
    )
    return Monitor(services, BacklogSampler(services.queues, sink, clock, limits), reconciler, retries)


def make_sampler_handler(monitor: Callable[[], Monitor] = default_monitor) -> Handler:
    @logger.inject_lambda_context(clear_state=True)
    @metrics.log_metrics
    def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
        sampled, alarms, retries = monitor().run()
        metrics.add_metric(name="QueuesSampled", unit=MetricUnit.Count, value=sampled.sampled)
        metrics.add_metric(name="QueuesNotSampled", unit=MetricUnit.Count, value=sampled.late + sampled.failed)
        metrics.add_metric(name="RetriesNotAllCounted", unit=MetricUnit.Count, value=int(retries.truncated))
        metrics.add_metric(name="AlarmChangesPending", unit=MetricUnit.Count, value=alarms.pending)
        answer = {"sampled": asdict(sampled), "alarms": asdict(alarms), "retries": asdict(retries)}
        logger.info("sampled", extra=answer)
        return answer

    return handler
