"""The waker's origin (the local server, or the receive function's URL): requests passed on over kept-alive
connections shared by all the waker's threads (Pushpin's zurl opens new connections to the waker often; a
connection per waker thread would open as many to the origin)."""

from __future__ import annotations

import http.client
import threading
import urllib.parse
from dataclasses import dataclass, field

HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade", "proxy-connection"}
# Connections kept idle at most (more run at once when needed; those beyond are closed after their answer).
KEEP = 64
TIMEOUT_SECONDS = 35

Answer = tuple[int, str, list[tuple[str, str]], bytes]


@dataclass(eq=False)
class Origin:
    url: str  # scheme://host[:port]
    timeout: float = TIMEOUT_SECONDS  # (per connection attempt and read)
    _idle: list[http.client.HTTPConnection] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _target: urllib.parse.SplitResult = field(init=False)

    def __post_init__(self) -> None:
        self._target = urllib.parse.urlsplit(self.url)  # (once, not per request)

    def call(self, method: str, path: str, headers: list[tuple[str, str]], body: bytes) -> Answer:
        """The origin's answer to the request (its hop-by-hop headers dropped, its body sent with a length)."""
        target = self._target
        sent = [(k, v) for k, v in headers if k.lower() not in HOP_BY_HOP and k.lower() != "content-length"]
        if target.scheme == "https":  # a function URL answers to its own host only: the client's is passed on
            host = next((v for k, v in sent if k.lower() == "host"), "")
            sent = [(k, v) for k, v in sent if k.lower() != "host"] + [
                ("Host", target.netloc),
                ("X-Forwarded-Host", host),
            ]
        sent.append(("Content-Length", str(len(body))))
        connection, reused = self._take(target)
        while True:
            try:
                connection.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
                for name, value in sent:
                    connection.putheader(name, value)
                connection.endheaders(body)
                answer = connection.getresponse()
                content = answer.read()
            except (http.client.HTTPException, ConnectionError):
                connection.close()
                if not reused:
                    raise
                connection, reused = self._new(target), False  # the origin closed a kept-alive one meanwhile
                continue
            if answer.will_close:
                connection.close()
            else:
                self._give_back(connection)
            return answer.status, answer.reason, list(answer.getheaders()), content

    def _take(self, target: urllib.parse.SplitResult) -> tuple[http.client.HTTPConnection, bool]:
        with self._lock:
            if self._idle:
                return self._idle.pop(), True
        return self._new(target), False

    def _new(self, target: urllib.parse.SplitResult) -> http.client.HTTPConnection:
        kind = http.client.HTTPSConnection if target.scheme == "https" else http.client.HTTPConnection
        return kind(target.netloc, timeout=self.timeout)

    def _give_back(self, connection: http.client.HTTPConnection) -> None:
        with self._lock:
            if len(self._idle) < KEEP:
                self._idle.append(connection)
                return
        connection.close()

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
        for connection in idle:
            connection.close()
