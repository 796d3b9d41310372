"""Wakes for the receives the wait tier holds (`mnsd.grip`, `wait_tier/`): each message made receivable, now or at
a known time, is posted to the tier's wake endpoint as `{"channel", "count"}` or `{"channel", "at"}`.

A wake that does not arrive (the tier restarting, the network) loses no message: it stays receivable, and the
waiters the wake missed ask again when their hold times out (at most the client's wait). So a post is tried once,
briefly, and its failure only logged: the operation that made the message receivable has succeeded.
"""

from __future__ import annotations

import json
import logging
import os
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass

from mnsd import grip
from mnsd.queues.notifier import Notifier

logger = logging.getLogger(__name__)

POST_TIMEOUT_SECONDS = 1.0

Post = Callable[[bytes], None]


def http_post(url: str, sign: Callable[[urllib.request.Request], None] | None = None) -> Post:
    """A post of a wake document to `url` (signed by `sign` first: SigV4 for an IAM route on AWS)."""

    def post(body: bytes) -> None:
        request = urllib.request.Request(url, data=body, method="POST", headers={"Content-Type": "application/json"})
        if sign is not None:
            sign(request)
        with urllib.request.urlopen(request, timeout=POST_TIMEOUT_SECONDS) as answer:  # noqa: S310 (the stack's URL)
            answer.read()

    return post


def aws_signer() -> Callable[[urllib.request.Request], None]:
    """SigV4 for the API's IAM-authorized wake route, with the function's own credentials (botocore, in Lambda)."""

    def sign(request: urllib.request.Request) -> None:
        import botocore.session
        from botocore.auth import SigV4Auth
        from botocore.awsrequest import AWSRequest

        credentials = botocore.session.get_session().get_credentials()
        signed = AWSRequest(method="POST", url=request.full_url, data=request.data, headers=dict(request.headers))
        SigV4Auth(credentials, "execute-api", os.environ.get("AWS_REGION", "us-east-1")).add_auth(signed)
        for name, value in signed.headers.items():
            request.add_header(name, value)

    return sign


@dataclass(eq=False)
class TierWakes:
    """A notifier that also tells the wait tier (`inner` wakes this process's own waiting receives, if any)."""

    inner: Notifier
    post: Post

    def wait(self, queue_id: str, seconds: float) -> None:
        self.inner.wait(queue_id, seconds)

    def notify(self, queue_id: str, count: int = 1) -> None:
        self.inner.notify(queue_id, count)
        self._send({"channel": grip.channel(queue_id), "count": count})

    def due(self, queue_id: str, at_ms: int) -> None:
        self.inner.due(queue_id, at_ms)
        self._send({"channel": grip.channel(queue_id), "at": at_ms})

    def _send(self, wake: dict[str, object]) -> None:
        try:
            self.post(json.dumps(wake).encode())
        except OSError as error:  # (urllib's URLError and timeouts are OSErrors)
            logger.warning("wait tier wake not delivered: %s", error)
