"""The local runtime's AWS clients, on moto's in-process backends."""

from __future__ import annotations

import threading
from typing import Any

# moto answers at once and never throttles: a local client tries each call once, so that the lock below is held for
# one attempt only. (The DynamoDB engine retries by the outcome's kind outside it: `mnsd.storage.dynamodb.retries`.)
LOCAL_RETRIES = {"mode": "standard", "total_max_attempts": 1}


def local_client(name: str, region: str) -> Any:
    """A boto3 client of `name` that tries each call once."""
    import boto3
    from botocore.config import Config

    return boto3.client(name, region_name=region, config=Config(retries=dict(LOCAL_RETRIES)))


class SerializedClient:
    """A boto3 client whose calls run one at a time.

    moto's in-memory backend is not thread-safe: two threads' conditional updates of one item could
    both pass their condition. DynamoDB evaluates each conditional write atomically; serializing the
    calls gives moto the same per-call atomicity (and no more: races between calls stay real). The lock is
    held for one call, made once (`local_client`): a retry's pause, taken by the caller, holds no lock, and
    one request's backoff never delays another's call.
    """

    def __init__(self, client: Any, lock: threading.Lock | None = None) -> None:
        self._client = client
        self._lock = lock or threading.Lock()

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self._client, name)
        if not callable(attribute):
            return attribute

        def call(*args: Any, **kwargs: Any) -> Any:
            with self._lock:
                return attribute(*args, **kwargs)

        return call
