"""An HTTP endpoint that receives MNS pushes and checks their signatures as Alibaba's sample endpoints do.

Header names are compared case-sensitively, as the samples compare them: the Java SDK's
(`HttpEndpointSubscription`, and the spec's Java verifier) looks up `Content-md5`, `Content-Type`, `Date`; the
Python SDK's (`sample/topic/server.py`, on Python 3) `content-md5`, `content-type`, `date`; both take the
`x-mns-*` names in lower case. A push whose names differ in case does not verify.
"""

from __future__ import annotations

import base64
import threading
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding


@dataclass
class Hit:
    at: float  # time.monotonic()
    path: str
    headers: dict[str, str]  # names exactly as received
    body: bytes
    signature_valid: bool  # as the Java SDK's sample endpoint verifies it
    status: int
    python_sample_valid: bool = False  # as the Python SDK's sample endpoint verifies it


# The signed standard headers, named as each sample endpoint looks them up (exactly).
JAVA_SAMPLE_NAMES = ("Content-md5", "Content-Type", "Date")
PYTHON_SAMPLE_NAMES = ("content-md5", "content-type", "date")


def verify_push_signature(
    method: str, path: str, headers: dict[str, str], names: tuple[str, str, str] = JAVA_SAMPLE_NAMES
) -> bool:
    """Verify a push as a sample endpoint does: the signed headers looked up by `names` (case-sensitively), the
    certificate fetched from the URL the request names, the RSA-SHA1 signature checked."""
    mns_headers = "\n".join(sorted(f"{k}:{v}" for k, v in headers.items() if k.startswith("x-mns-")))
    signed = [headers.get(name, "") for name in names]
    text = f"{method}\n" + "\n".join(signed) + f"\n{mns_headers}\n{path}"
    if "x-mns-signing-cert-url" not in headers or "Authorization" not in headers:
        return False
    cert_url = base64.b64decode(headers["x-mns-signing-cert-url"]).decode()
    with urllib.request.urlopen(cert_url, timeout=5) as response:  # noqa: S310
        certificate = x509.load_pem_x509_certificate(response.read())
    try:
        certificate.public_key().verify(  # type: ignore[call-arg]
            base64.b64decode(headers["Authorization"]), text.encode("utf-8"), padding.PKCS1v15(), hashes.SHA1()
        )
    except InvalidSignature:
        return False
    return True


class PushEndpoint:
    """An HTTP endpoint on 127.0.0.1 recording every push; `status_for(n)` answers the n-th (1-based) hit."""

    def __init__(self) -> None:
        self.hits: list[Hit] = []
        self.status_for: Callable[[int], int] = lambda n: 204
        self.delay_seconds = 0.0
        self.certificate = ""  # served at /cert.pem, for tests that sign pushes without the local server
        self._lock = threading.Condition()
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                headers = dict(self.headers.items())  # names as sent: compared case-sensitively
                valid = verify_push_signature("POST", self.path, headers)
                python_valid = verify_push_signature("POST", self.path, headers, PYTHON_SAMPLE_NAMES)
                with endpoint._lock:
                    status = endpoint.status_for(len(endpoint.hits) + 1)
                    hit = Hit(time.monotonic(), self.path, headers, body, valid, status, python_valid)
                    endpoint.hits.append(hit)
                    endpoint._lock.notify_all()
                if endpoint.delay_seconds:
                    time.sleep(endpoint.delay_seconds)
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_GET(self) -> None:
                payload = endpoint.certificate.encode()
                self.send_response(200 if payload else 404)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def url(self, path: str = "") -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}{path}"

    def wait_for(self, count: int, timeout: float) -> list[Hit]:
        with self._lock:
            self._lock.wait_for(lambda: len(self.hits) >= count, timeout)
            return list(self.hits)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class HangingEndpoint(PushEndpoint):
    """An endpoint that records each push and then never answers (within any push's deadline)."""

    def __init__(self, hang_seconds: float = 60.0) -> None:
        super().__init__()
        self.delay_seconds = hang_seconds


# A push attempt's deadline: a healthy push held behind a hanging sibling's attempt waits this long.
PUSH_DEADLINE_SECONDS = 5.0


def assert_not_held_up(delays: list[float]) -> None:
    """Healthy pushes published beside a hanging sibling: none waited out the sibling's attempt (each under half its
    deadline, which a loaded machine's pause of a second does not reach) and most went at once (the median under
    0.25 s). Held behind the sibling, they came up to the whole deadline late."""
    ordered = sorted(delays)
    shown = [round(d, 2) for d in delays]
    assert ordered[-1] < PUSH_DEADLINE_SECONDS / 2 and ordered[len(ordered) // 2] < 0.25, shown


def delivery_delays(
    published_at: dict[str, float], hits: list[Hit], message_id_of: Callable[[Hit], str]
) -> list[float]:
    """Seconds from each publish to the first push of its message (time.monotonic() both)."""
    first: dict[str, float] = {}
    for hit in hits:
        first.setdefault(message_id_of(hit), hit.at)
    return [first[message_id] - at for message_id, at in published_at.items() if message_id in first]
