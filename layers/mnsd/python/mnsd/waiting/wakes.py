"""Wakes for the receives the wait tier holds (`wait_tier/`): each message made receivable, now or at a known time,
is posted to the tier's wake endpoint (`contract.wake_document`: `{"channel", "count"}` or `{"channel", "at"}`).

A wake that does not arrive (the tier restarting, the network) loses no message: it stays receivable, and the
waiters the wake missed ask again when their hold times out (at most the client's wait). So a post is tried once,
briefly (once more on a new connection if the kept-alive one had been closed), and its failure only logged: the
operation that made the message receivable has succeeded. A wake posted twice only wakes a waiter more.

A request the tier passed on (signed by it) posts none: its wakes are kept (`carried`) and go back in its answer
(`contract.WAKES_HEADER`), which the tier reads as it would a posted wake (`mnsd.request.api`): one request and one
round trip fewer per send through the tier.
"""

from __future__ import annotations

import http.client
import json
import logging
import os
import threading
import urllib.parse
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from mnsd.queues.notifier import Notifier
from mnsd.waiting import contract

logger = logging.getLogger(__name__)

POST_TIMEOUT_SECONDS = 1.0

# The wakes of the request being served, when they go back in its answer (`carried`), else None: posted.
_carried: ContextVar[list[dict[str, object]] | None] = ContextVar("carried_wakes", default=None)

Post = Callable[[bytes], None]
Sign = Callable[[str, bytes, dict[str, str]], dict[str, str]]  # (url, body, headers) -> the headers to add


class KeptAlivePost:
    """Posts of wake documents to `url` (signed by `sign` first: SigV4 for an IAM route on AWS), over one kept-alive
    connection per thread: a connection per wake cost every send a TCP handshake (and on AWS a TLS one) before its
    answer, and the tier a connection to accept."""

    def __init__(self, url: str, sign: Sign | None = None) -> None:
        self.url, self._sign = url, sign
        self._target = urllib.parse.urlsplit(url)
        self._path = self._target.path or "/"
        self._local = threading.local()

    def __call__(self, body: bytes) -> None:
        headers = {"Host": self._target.netloc, "Content-Type": "application/json", "Content-Length": str(len(body))}
        if self._sign is not None:
            headers.update(self._sign(self.url, body, headers))
        connection: http.client.HTTPConnection | None = getattr(self._local, "connection", None)
        reused = connection is not None
        while True:
            if connection is None:
                connection = self._connect()
            try:
                connection.request("POST", self._path, body, headers)
                answer = connection.getresponse()
                answer.read()
            except (http.client.HTTPException, OSError) as error:
                connection.close()
                self._local.connection = connection = None
                if reused:  # the tier closed an idle one (or a frozen Lambda's went stale): once more, anew
                    reused = False
                    continue
                raise OSError(f"wake post failed: {error}") from error
            if answer.will_close:
                connection.close()
                connection = None
            self._local.connection = connection
            if answer.status >= 300:
                raise OSError(f"wake refused: {answer.status} {answer.reason}")
            return

    def _connect(self) -> http.client.HTTPConnection:
        kind = http.client.HTTPSConnection if self._target.scheme == "https" else http.client.HTTPConnection
        return kind(self._target.netloc, timeout=POST_TIMEOUT_SECONDS)


def aws_signer() -> Sign:
    """SigV4 for the API's IAM-authorized wake route, with the function's own credentials (botocore, in Lambda)."""

    def sign(url: str, body: bytes, headers: dict[str, str]) -> dict[str, str]:
        import botocore.session
        from botocore.auth import SigV4Auth
        from botocore.awsrequest import AWSRequest

        credentials = botocore.session.get_session().get_credentials()
        signed = AWSRequest(method="POST", url=url, data=body, headers=dict(headers))
        SigV4Auth(credentials, "execute-api", os.environ.get("AWS_REGION", "us-east-1")).add_auth(signed)
        return dict(signed.headers.items())

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
        self._send(contract.wake_document(queue_id, count=count))

    def due(self, queue_id: str, at_ms: int) -> None:
        self.inner.due(queue_id, at_ms)
        self._send(contract.wake_document(queue_id, at_ms=at_ms))

    def _send(self, wake: dict[str, object]) -> None:
        carried = _carried.get()
        if carried is not None:
            carried.append(wake)
            return
        try:
            self.post(json.dumps(wake).encode())
        except OSError as error:  # (urllib's URLError and timeouts are OSErrors)
            logger.warning("wait tier wake not delivered: %s", error)


@contextmanager
def carried(through_tier: bool) -> Iterator[list[dict[str, object]]]:
    """The wakes told within (to `TierWakes`), kept for the answer instead of posted when the request came `through_tier`
    (else posted, and the list stays empty)."""
    wakes: list[dict[str, object]] = []
    if not through_tier:
        yield wakes
        return
    token = _carried.set(wakes)
    try:
        yield wakes
    finally:
        _carried.reset(token)
