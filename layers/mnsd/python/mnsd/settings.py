"""Typed settings, read once from the environment. The variable names are shared with `infra/`."""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import lru_cache

META_TABLE = "MNS_META_TABLE"
MESSAGE_TABLE = "MNS_MESSAGE_TABLE"
REGION = "MNS_REGION"
RECEIPT_SECRET = "MNS_RECEIPT_SECRET"
CREDENTIALS = "MNS_CREDENTIALS"
ACCOUNT_ID = "MNS_ACCOUNT_ID"
ACCESS_KEY_ID = "MNS_ACCESS_KEY_ID"
ACCESS_KEY_SECRET = "MNS_ACCESS_KEY_SECRET"
MAX_QUEUES = "MNS_MAX_QUEUES"
MAX_POLL_SECONDS = "MNS_MAX_POLL_SECONDS"
POLL_INTERVAL_MS = "MNS_POLL_INTERVAL_MS"
# On AWS the secrets are not in the environment: these name Secrets Manager secrets holding them.
RECEIPT_SECRET_ARN = "MNS_RECEIPT_SECRET_ARN"
CREDENTIALS_SECRET_ARN = "MNS_CREDENTIALS_SECRET_ARN"

DEFAULT_ACCOUNT_ID = "1000000000000001"
DEFAULT_ACCESS_KEY_ID = "LOCALACCESSKEYID"
DEFAULT_ACCESS_KEY_SECRET = "LOCALACCESSKEYSECRET"


@dataclass(frozen=True)
class Settings:
    meta_table: str = "mns-meta"
    message_table: str = "mns-messages"
    region: str = "cn-hangzhou"
    receipt_secret: str = "local-receipt-secret"
    credentials: str = ""
    max_queues: int = 1000
    # API Gateway cuts a request at 30 s: a long poll must answer before that.
    max_poll_seconds: float = 28.0
    poll_interval_ms: int = 500
    receipt_secret_arn: str = ""
    credentials_secret_arn: str = ""

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None) -> Settings:
        env = dict(os.environ if env is None else env)
        return cls(
            meta_table=env.get(META_TABLE, cls.meta_table),
            message_table=env.get(MESSAGE_TABLE, cls.message_table),
            region=env.get(REGION, cls.region),
            receipt_secret=env.get(RECEIPT_SECRET, cls.receipt_secret),
            credentials=credentials_from_env(env),
            max_queues=int(env.get(MAX_QUEUES, cls.max_queues)),
            max_poll_seconds=float(env.get(MAX_POLL_SECONDS, cls.max_poll_seconds)),
            poll_interval_ms=int(env.get(POLL_INTERVAL_MS, cls.poll_interval_ms)),
            receipt_secret_arn=env.get(RECEIPT_SECRET_ARN, ""),
            credentials_secret_arn=env.get(CREDENTIALS_SECRET_ARN, ""),
        )


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
