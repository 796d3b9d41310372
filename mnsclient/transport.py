"""HTTP to one endpoint: one kept-alive connection per thread, a failure to reach the endpoint turned into
`ServiceError(0, "NetworkError")` naming the endpoint (never the key)."""

from __future__ import annotations

import http.client
import threading
from dataclasses import dataclass
from urllib.parse import urlsplit

from mnsclient.errors import NETWORK, ServiceError

TIMEOUT_SECONDS = 40.0  # above the longest receive wait (30 s)


@dataclass(frozen=True)
class Reply:
    status: int
    headers: dict[str, str]  # names in lower case
    body: bytes


class Transport:
    def __init__(self, endpoint: str, timeout: float = TIMEOUT_SECONDS) -> None:
        parts = urlsplit(endpoint)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http(s) endpoint: {endpoint}")
        self.endpoint = endpoint
        self.secure = parts.scheme == "https"
        self.host = parts.hostname
        self.port = parts.port
        self.netloc = parts.netloc
        self.timeout = timeout
        self._local = threading.local()

    def _connection(self) -> tuple[http.client.HTTPConnection, bool]:
        connection = getattr(self._local, "connection", None)
        if connection is not None:
            return connection, True
        kind = http.client.HTTPSConnection if self.secure else http.client.HTTPConnection
        connection = kind(self.host, self.port, timeout=self.timeout)
        self._local.connection = connection
        return connection, False

    def _drop(self) -> None:
        connection = getattr(self._local, "connection", None)
        self._local.connection = None
        if connection is not None:
            connection.close()

    def request(self, method: str, target: str, body: bytes, headers: dict[str, str]) -> Reply:
        """One request; an idle kept-alive connection the server closed is replaced once, before any answer."""
        for attempt in (1, 2):
            connection, reused = self._connection()
            try:
                connection.request(method, target, body=body or None, headers=headers)
                response = connection.getresponse()
                data = response.read()
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError) as error:
                self._drop()
                if reused and attempt == 1:
                    continue
                raise ServiceError(0, NETWORK, f"{self.endpoint} closed the connection: {error}") from None
            except (OSError, http.client.HTTPException) as error:
                self._drop()
                raise ServiceError(0, NETWORK, f"cannot reach {self.endpoint}: {error}") from None
            if response.getheader("connection", "").lower() == "close":
                self._drop()
            return Reply(response.status, {k.lower(): v for k, v in response.getheaders()}, data)
        raise AssertionError("unreachable")
