"""The HTTP request of a push: one POST, sent as MNS sends it, never into the service's own network.

- Header names leave exactly as given (`http.client`; urllib would rewrite `x-mns-version` as
  `X-mns-version`, and the spec's verifier compares names case-sensitively).
- The host is resolved once and every address it resolves to must be public: loopback, private,
  shared, link-local (the instance metadata address among them), multicast, reserved and unspecified
  addresses are refused, also when embedded in an IPv6 address (IPv4-mapped, NAT64, 6to4, Teredo),
  unless a network of the explicit allow-list (`MNS_PUSH_ALLOWED_NETWORKS`, empty on AWS) holds them.
  The connection goes to the address that was checked, with the endpoint's own Host header: no second
  resolution, so no DNS-rebinding window. Redirects are answers, never followed.
- One deadline covers the whole attempt: resolution, connect, TLS handshake, sending, the status
  line, the headers and the body. An endpoint trickling its answer cannot hold an attempt longer.
"""

from __future__ import annotations

import http.client
import io
import ipaddress
import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterable
from functools import lru_cache
from urllib.parse import urlsplit

from mnsd.model.egress import Address, AddressRefused, Network, literal_address, permitted

SEND_CHUNK = 16 * 1024
MAX_RESPONSE_BODY = 64 * 1024  # read (and discarded) at most; the status decides


class DeadlineExceeded(TimeoutError):
    """The attempt did not complete within its deadline."""


def resolve(host: str, port: int) -> list[Address]:
    """Every address of a host (one DNS resolution)."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP)
    return [ipaddress.ip_address(str(info[4][0])) for info in infos]


class Deadline:
    def __init__(self, seconds: float, now: Callable[[], float] = time.monotonic) -> None:
        self._now = now
        self._end = now() + seconds

    def remaining(self) -> float:
        left = self._end - self._now()
        if left <= 0:
            raise DeadlineExceeded("the push did not complete in time")
        return left


def _resolve_within(host: str, port: int, deadline: Deadline) -> list[Address]:
    """`resolve` bounded by the deadline (the system resolver has no timeout of its own)."""
    literal = literal_address(host)
    if literal is not None:
        return [literal]
    found: list[Address] = []
    failure: list[OSError] = []
    done = threading.Event()

    def run() -> None:
        try:
            found.extend(resolve(host, port))
        except OSError as error:
            failure.append(error)
        finally:
            done.set()

    threading.Thread(target=run, name="push-resolve", daemon=True).start()
    if not done.wait(deadline.remaining()):
        raise DeadlineExceeded(f"resolving {host} did not complete in time")
    if failure:
        raise failure[0]
    return found


class _DeadlineSocket:
    """A connected socket whose every send and receive ends by the attempt's deadline (a socket timeout
    alone bounds each read, so an answer trickled a byte at a time could last for ever)."""

    def __init__(self, sock: socket.socket, deadline: Deadline) -> None:
        self._sock = sock
        self._deadline = deadline

    def sendall(self, data: bytes) -> None:
        view = memoryview(data)
        for start in range(0, len(view), SEND_CHUNK):
            self._sock.settimeout(self._deadline.remaining())
            self._sock.sendall(view[start : start + SEND_CHUNK])

    def recv_into(self, buffer: memoryview) -> int:
        self._sock.settimeout(self._deadline.remaining())
        return self._sock.recv_into(buffer)

    def makefile(self, mode: str = "rb", *args: object, **kwargs: object) -> io.BufferedReader:
        return io.BufferedReader(_DeadlineReader(self))

    def close(self) -> None:
        """What http.client calls as soon as an answer says `Connection: close`, before its body is read (a
        server's answer without a length, such as `php -S`'s): the socket stays open for the body, and `post`
        closes it when the attempt ends (`release`)."""

    def release(self) -> None:
        self._sock.close()


class _DeadlineReader(io.RawIOBase):
    def __init__(self, sock: _DeadlineSocket) -> None:
        self._sock = sock

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        return self._sock.recv_into(buffer)


@lru_cache(maxsize=1)
def _tls_context() -> ssl.SSLContext:
    """Certificates verified against the system's CAs, for the endpoint's host name (not the address)."""
    return ssl.create_default_context()


def _connect(scheme: str, host: str, port: int, addresses: list[Address], deadline: Deadline) -> _DeadlineSocket:
    last: OSError = OSError(f"no address for {host}")
    for address in addresses:
        try:
            sock = socket.create_connection((str(address), port), timeout=deadline.remaining())
        except OSError as error:
            last = error
            continue
        if scheme == "https":
            try:
                sock.settimeout(deadline.remaining())  # the handshake as a whole is bounded by this
                sock = _tls_context().wrap_socket(sock, server_hostname=host)
            except BaseException:
                sock.close()
                raise
        return _DeadlineSocket(sock, deadline)
    raise last


def post(
    url: str,
    headers: dict[str, str],
    body: bytes,
    *,
    seconds: float,
    allowed: Iterable[Network] = (),
) -> int:
    """POST `body` to `url` with `headers` (names sent as given, after `Host`); the answer's status.

    Raises AddressRefused (nothing was sent), DeadlineExceeded, OSError or http.client.HTTPException.
    """
    deadline = Deadline(seconds)
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    host = parts.hostname or ""
    default_port = 443 if scheme == "https" else 80
    port = parts.port or default_port
    addresses = _resolve_within(host, port, deadline)
    allowed = tuple(allowed)
    refused = [address for address in addresses if not permitted(address, allowed)]
    if not addresses or refused:
        raise AddressRefused(f"{host} resolves to an address pushes may not reach")
    resource = parts.path or "/"
    if parts.query:
        resource += "?" + parts.query
    host_header = parts.netloc.rpartition("@")[2]  # as the endpoint was given, port included if it was
    connection = http.client.HTTPConnection(host, port)
    sock = _connect(scheme, host, port, addresses, deadline)
    connection.sock = sock
    try:
        connection.putrequest("POST", resource, skip_host=True, skip_accept_encoding=True)
        connection.putheader("Host", host_header)
        for name, value in headers.items():
            connection.putheader(name, value.encode("utf-8"))  # a tag may be any text
        connection.endheaders(body)
        response = connection.getresponse()
        response.read(MAX_RESPONSE_BODY)
        return response.status
    finally:
        connection.close()
        sock.release()
