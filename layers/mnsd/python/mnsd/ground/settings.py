"""Typed settings, read once from the environment. The variable names are shared with `infra/`."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

META_TABLE = "MNS_META_TABLE"
MESSAGE_TABLE = "MNS_MESSAGE_TABLE"
REGION = "MNS_REGION"
RECEIPT_SECRET = "MNS_RECEIPT_SECRET"
CREDENTIALS = "MNS_CREDENTIALS"
# Locally: a JSON keys document (`mnsd.access.keys.parse_keys`) whose keys are added to those of MNS_CREDENTIALS.
KEYS_FILE = "MNS_KEYS_FILE"
ACCOUNT_ID = "MNS_ACCOUNT_ID"
ACCESS_KEY_ID = "MNS_ACCESS_KEY_ID"
ACCESS_KEY_SECRET = "MNS_ACCESS_KEY_SECRET"
MAX_QUEUES = "MNS_MAX_QUEUES"
MAX_TOPICS = "MNS_MAX_TOPICS"
TOPIC_MESSAGE_TABLE = "MNS_TOPIC_MESSAGE_TABLE"
LOG_TABLE = "MNS_LOG_TABLE"
PUSH_STATE_MACHINE_ARN = "MNS_PUSH_STATE_MACHINE_ARN"
PUSH_QUEUE_URL = "MNS_PUSH_QUEUE_URL"
# The SQS FIFO queue the fan-out hands external first attempts to (AWS); unset, it makes them itself.
FIRST_ATTEMPT_QUEUE_URL = "MNS_FIRST_ATTEMPT_QUEUE_URL"
SIGNING_CERT_URL = "MNS_SIGNING_CERT_URL"
SIGNING_CERTIFICATE = "MNS_SIGNING_CERTIFICATE"
SIGNING_KEY = "MNS_SIGNING_KEY"
MAX_POLL_SECONDS = "MNS_MAX_POLL_SECONDS"
POLL_INTERVAL_MS = "MNS_POLL_INTERVAL_MS"
QUEUE_STRIPES = "MNS_QUEUE_STRIPES"
MAX_QUEUE_STRIPES = "MNS_MAX_QUEUE_STRIPES"
PACKED_BATCHES = "MNS_PACKED_BATCHES"
META_CACHE_SECONDS = "MNS_META_CACHE_SECONDS"
# Authenticated requests one account may make per second (0: no limit), `mnsd.control.limits`.
ACCOUNT_REQUESTS_PER_SECOND = "MNS_ACCOUNT_REQUESTS_PER_SECOND"
# Networks HTTP pushes may reach although internal (comma-separated CIDRs): for local testing only.
PUSH_ALLOWED_NETWORKS = "MNS_PUSH_ALLOWED_NETWORKS"
PUSH_HEADER_NAMES = "MNS_PUSH_HEADER_NAMES"
# The Lambda functions and EventBridge buses pushes may reach (comma-separated ARNs or `*` patterns; none by default:
# `mnsd.model.cloud_targets`), and the AWS region the deployment runs in (Lambda sets AWS_REGION).
PUSH_LAMBDA_ARNS = "MNS_PUSH_LAMBDA_ARNS"
PUSH_EVENT_BUS_ARNS = "MNS_PUSH_EVENT_BUS_ARNS"
AWS_REGION = "AWS_REGION"
# On AWS the secrets are not in the environment: these name Secrets Manager secrets holding them.
RECEIPT_SECRET_ARN = "MNS_RECEIPT_SECRET_ARN"
CREDENTIALS_SECRET_ARN = "MNS_CREDENTIALS_SECRET_ARN"
SIGNING_KEY_SECRET_ARN = "MNS_SIGNING_KEY_SECRET_ARN"
# The wait tier (`mnsd.waiting`, `wait_tier/`): the key its requests are signed with (or the secret holding it), and
# where wakes are posted (unset: the tier is off; a receive never holds).
WAIT_TIER_KEY = "MNS_WAIT_TIER_KEY"
WAIT_TIER_KEY_SECRET_ARN = "MNS_WAIT_TIER_KEY_SECRET_ARN"
WAIT_TIER_WAKE_URL = "MNS_WAIT_TIER_WAKE_URL"
# Live metrics on AWS (`mnsd.metrics`): whether a queue or topic that never set MetricsEnabled is monitored
# (`true`/`false`, CDK context `metricsDefault`), the CloudWatch alarms the sampler keeps (`mnsd.monitoring.alarms`):
# their names' prefix and the topic they notify unless a queue's Alarms names another.
METRICS_DEFAULT = "MNS_METRICS_DEFAULT"
ALARM_PREFIX = "MNS_ALARM_PREFIX"
ALARM_TOPIC_ARN = "MNS_ALARM_TOPIC_ARN"

DEFAULT_ACCOUNT_ID = "1000000000000001"
DEFAULT_ACCESS_KEY_ID = "LOCALACCESSKEYID"
DEFAULT_ACCESS_KEY_SECRET = "LOCALACCESSKEYSECRET"


@dataclass(frozen=True)
class Settings:
    meta_table: str = "mns-meta"
    message_table: str = "mns-messages"
    topic_message_table: str = "mns-topic-messages"
    log_table: str = "mns-log"
    region: str = "cn-hangzhou"
    receipt_secret: str = "local-receipt-secret"
    credentials: str = ""
    keys_file: str = ""
    max_queues: int = 1000
    max_topics: int = 1000
    # API Gateway cuts a request at 30 s: a long poll must answer before that, retries included (no claim starts
    # later than `mnsd.ground.deadlines.LAST_CLAIM_SECONDS` after the request arrived, whatever this says).
    max_poll_seconds: float = 24.0
    poll_interval_ms: int = 500
    # Partitions a new queue's messages spread over, and the most a busy queue grows to (DynamoDB engine:
    # `mnsd.storage.dynamodb.placement.stripes`).
    queue_stripes: int = 1
    max_queue_stripes: int = 128
    # A standard queue's batch sends stored packed, its messages sharing their writes (DynamoDB engine:
    # `mnsd.storage.dynamodb.items.packs`); on by default, `MNS_PACKED_BATCHES=false` for one lease per message; tables
    # are read either way.
    packed_batches: bool = True
    # How long a container trusts the queue records it read (its own writes update them at once): a queue
    # created, changed or deleted elsewhere is seen here at most this late.
    meta_cache_seconds: float = 5.0
    account_requests_per_second: int = 0
    # How long after a queue's writes begin to keep its ready index the index is built over its older leases:
    # longer than a queue record is cached plus the longest request that writes messages (a push fan-out, 60 s),
    # so no container still writes the queue's leases without the index by then (DynamoDB engine:
    # `mnsd.storage.dynamodb.placement.placement.Spread`).
    index_settle_seconds: float = 120.0
    receipt_secret_arn: str = ""
    credentials_secret_arn: str = ""
    # Push delivery: the retry state machine, the queue its attempts go through, and the key that signs
    # HTTP pushes (PEM; on AWS read from the secret the ARN names) with the certificate's public URL.
    push_state_machine_arn: str = ""
    push_queue_url: str = ""
    # The FIFO queue of first attempts to HTTP, mail and SMS endpoints, one message group per subscription
    # (`mnsd.push.attempt_queue`). Empty (the local runtime, the tests, stacks before it): the fan-out makes them.
    first_attempt_queue_url: str = ""
    signing_cert_url: str = ""
    signing_certificate: str = ""
    signing_key: str = ""
    signing_key_secret_arn: str = ""
    # Internal networks (loopback, private, link-local, ...) HTTP pushes may reach: none on AWS.
    push_allowed_networks: str = ""
    # How HTTP pushes name their signed standard headers: "live" (`Content-md5`, `Content-Type`, `Date`, once) or
    # "with-lower-case-copies" (those and a lower-case copy of each: `mnsd.push.delivery.http_push`).
    push_header_names: str = "live"
    # The functions and buses subscriptions may push to (`mnsd.model.cloud_targets`): none by default.
    push_lambda_arns: str = ""
    push_event_bus_arns: str = ""
    aws_region: str = ""  # the AWS region the deployment runs in: a function's or bus's ARN must name it
    # Whether a queue or topic whose MetricsEnabled is unset is monitored on AWS (its EMF series published, its
    # gauges sampled); one that set it keeps its choice (`mnsd.metrics.monitored`).
    metrics_default: bool = True
    alarm_prefix: str = "MNS-queue-alarm/"  # the stack names its own (`{stack}-queue-alarm/`)
    alarm_topic_arn: str = ""
    wait_tier_key: str = ""
    wait_tier_key_secret_arn: str = ""
    wait_tier_wake_url: str = ""

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None) -> Settings:
        env = dict(os.environ if env is None else env)
        types = {f.name: f.type for f in dataclasses.fields(cls)}
        given = {
            name: PARSERS[str(types[name])](env[variable]) for name, variable in VARIABLES.items() if variable in env
        }
        return cls(credentials=credentials_from_env(env), **given)


# The variable each setting is read from (`credentials` from several: `credentials_from_env`); settings without
# one keep their defaults.
VARIABLES = {
    "meta_table": META_TABLE,
    "message_table": MESSAGE_TABLE,
    "topic_message_table": TOPIC_MESSAGE_TABLE,
    "log_table": LOG_TABLE,
    "region": REGION,
    "receipt_secret": RECEIPT_SECRET,
    "keys_file": KEYS_FILE,
    "max_queues": MAX_QUEUES,
    "max_topics": MAX_TOPICS,
    "max_poll_seconds": MAX_POLL_SECONDS,
    "poll_interval_ms": POLL_INTERVAL_MS,
    "queue_stripes": QUEUE_STRIPES,
    "max_queue_stripes": MAX_QUEUE_STRIPES,
    "packed_batches": PACKED_BATCHES,
    "meta_cache_seconds": META_CACHE_SECONDS,
    "account_requests_per_second": ACCOUNT_REQUESTS_PER_SECOND,
    "receipt_secret_arn": RECEIPT_SECRET_ARN,
    "credentials_secret_arn": CREDENTIALS_SECRET_ARN,
    "push_state_machine_arn": PUSH_STATE_MACHINE_ARN,
    "push_queue_url": PUSH_QUEUE_URL,
    "first_attempt_queue_url": FIRST_ATTEMPT_QUEUE_URL,
    "signing_cert_url": SIGNING_CERT_URL,
    "signing_certificate": SIGNING_CERTIFICATE,
    "signing_key": SIGNING_KEY,
    "signing_key_secret_arn": SIGNING_KEY_SECRET_ARN,
    "push_allowed_networks": PUSH_ALLOWED_NETWORKS,
    "push_header_names": PUSH_HEADER_NAMES,
    "push_lambda_arns": PUSH_LAMBDA_ARNS,
    "push_event_bus_arns": PUSH_EVENT_BUS_ARNS,
    "aws_region": AWS_REGION,
    "metrics_default": METRICS_DEFAULT,
    "alarm_prefix": ALARM_PREFIX,
    "alarm_topic_arn": ALARM_TOPIC_ARN,
    "wait_tier_key": WAIT_TIER_KEY,
    "wait_tier_key_secret_arn": WAIT_TIER_KEY_SECRET_ARN,
    "wait_tier_wake_url": WAIT_TIER_WAKE_URL,
}


def _switch(text: str) -> bool:
    """`true` or `false` (any case), as CDK context and the environment give a switch."""
    value = text.strip().lower()
    if value not in ("true", "false"):
        raise ValueError(f"expected true or false, got {text!r}")
    return value == "true"


PARSERS: dict[str, Callable[[str], Any]] = {"str": str, "int": int, "float": float, "bool": _switch}


def credentials_from_env(env: dict[str, str]) -> str:
    """`MNS_CREDENTIALS` (account:keyid:secret,...) if set, else the single-key variables or their defaults."""
    if env.get(CREDENTIALS):
        return env[CREDENTIALS]
    return ":".join(
        (
            env.get(ACCOUNT_ID, DEFAULT_ACCOUNT_ID),
            env.get(ACCESS_KEY_ID, DEFAULT_ACCESS_KEY_ID),
            env.get(ACCESS_KEY_SECRET, DEFAULT_ACCESS_KEY_SECRET),
        )
    )


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return Settings.from_env()
