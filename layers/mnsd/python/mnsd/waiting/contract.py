"""What the wait tier (`wait_tier/`) and the service (the origin) say to each other: the one place both import
(the standard library only: the tier's image carries this file and no more of the layer).

- The tier forwards a client's receive to the origin signed with the key both hold (`SIG_HEADER`, `sign`/`verify`:
  an HS256 JWT), and, when it asks again for a receive it holds, with the client's deadline (`DEADLINE_HEADER`).
- The origin answers a receive through the tier either with what it claimed (`CLAIMED_HEADER`, `MORE_HEADER`:
  receivable messages it saw and left; `DUE_HEADER`: when the first claimed lease ends) or, when nothing is
  receivable, with the answer to give when the wait ends plus `HOLD_HEADER` (hold until then, ms) and `DUE_HEADER`
  when a delayed or invisible message becomes receivable before it. `CHANNEL_HEADER` names the queue's channel in
  both. The tier removes all of these before its client sees the answer.
- Whatever makes a message receivable posts a wake (`wake_document`) to the tier's `WAKE_PATH`.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json

SIG_HEADER = "Mns-Wait-Sig"
DEADLINE_HEADER = "Mns-Wait-Deadline"
HOLD_HEADER = "Mns-Wait-Hold"
DUE_HEADER = "Mns-Wait-Due"
MORE_HEADER = "Mns-Wait-More"
CLAIMED_HEADER = "Mns-Wait-Claimed"
CHANNEL_HEADER = "Mns-Wait-Channel"
# Times after the client's arrival at the tier: a held receive is asked again only before `LAST_ASK_MS` (its claim
# must start before the origin's last claim, `mnsd.ground.deadlines.LAST_CLAIM_SECONDS`, 24 s: a woken receive past it
# is left held), and held `MAX_HOLD_MS` at most (the HTTP API cuts a request at 30 s; the origin's own bound is
# `mnsd.ground.deadlines.HOLD_SECONDS`, from when the request reached it).
LAST_ASK_MS = 23_500
MAX_HOLD_MS = 28_500
# Every header of the contract starts so: the tier drops any a client sent, and every one the origin answers.
PREFIX = "mns-wait-"

# The tier's paths: wakes (posted by the service, on AWS through the API's IAM-authorized route, or relayed by
# another instance), its readiness (the task's health), and its counters (on the wake port only).
WAKE_PATH = "/wait-tier/wake"
READY_PATH = "/wait-tier/ready"
STATS_PATH = "/wait-tier/stats"


def channel(queue_id: str) -> str:
    """The queue's channel: the name wakes and answers give it."""
    return "mns." + "".join(c if c.isalnum() or c in "-_" else "_" for c in queue_id)


def wake_document(queue_id: str, count: int | None = None, at_ms: int | None = None) -> dict[str, object]:
    """A wake: `count` messages receivable now, or one at `at_ms`."""
    if at_ms is not None:
        return {"channel": channel(queue_id), "at": at_ms}
    return {"channel": channel(queue_id), "count": count or 1}


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def sign(key: str, now: float, issuer: str = "wait-tier", lifetime: int = 3600) -> str:
    """The tier's signature (HS256 JWT with `iss` and `exp`)."""
    header = _b64(json.dumps({"typ": "JWT", "alg": "HS256"}).encode())
    claims = _b64(json.dumps({"exp": int(now) + lifetime, "iss": issuer}).encode())
    mac = hmac.new(key.encode(), f"{header}.{claims}".encode(), hashlib.sha256).digest()
    return f"{header}.{claims}.{_b64(mac)}"


def verify(token: str, key: str, now: float) -> bool:
    """Whether `token` is a JWT signed HS256 with `key` and not expired."""
    try:
        header, claims, mac = token.split(".")
        expected = hmac.new(key.encode(), f"{header}.{claims}".encode(), hashlib.sha256).digest()
        if not hmac.compare_digest(expected, _unb64(mac)):
            return False
        if json.loads(_unb64(header)).get("alg") != "HS256":
            return False
        expires = json.loads(_unb64(claims)).get("exp")
    except (ValueError, TypeError, AttributeError):
        return False
    return isinstance(expires, int | float) and expires > now
