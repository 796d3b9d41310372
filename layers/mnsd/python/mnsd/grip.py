"""GRIP, the protocol of the wait tier (Fanout's Pushpin, `wait_tier/`): how the origin knows a request came through
the tier (`Grip-Sig`, a JWT the tier signs with the key both hold), and the answer that asks the tier to hold a
receive until a message may be receivable (`Grip-Hold`), whose body is what the client gets when the wait ends.

A held receive's deadline travels with it: the hold tells the tier (`Mns-Wait-Deadline`), and the tier's waker
adds it to the request when Pushpin asks the origin again (removing any a client sent). So the wait a client asked
for counts from its first arrival, and the answer comes before the platform's 30 s integration timeout however
often the request was woken.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from dataclasses import dataclass, field

from mnsd import errors

SIG_HEADER = "grip-sig"
DEADLINE_HEADER = "Mns-Wait-Deadline"
# The origin's hints to the tier's waker (`wait_tier.waiters`), removed by it before Pushpin reads the answer:
# when the queue's next inactive or delayed message becomes receivable (ms), and whether a receive that got
# messages saw more than it took (wake as many more waiters), how many it took, and the queue's channel these are
# about.
DUE_HEADER = "Mns-Wait-Due"
MORE_HEADER = "Mns-Wait-More"
CLAIMED_HEADER = "Mns-Wait-Claimed"
CHANNEL_HEADER = "Mns-Wait-Channel"
# Pushpin holds a response 5 s at least (`MINIMUM_RESPONSE_TIMEOUT`): a rest of a wait shorter than 4.5 s the origin
# waits itself, as without the tier (one of 4.5 to 5 s is held 5 s).
MIN_HOLD_MS = 4500
PUSHPIN_MIN_HOLD_SECONDS = 5


def channel(queue_id: str) -> str:
    """The queue's channel (the tier makes each waiter's own channel from it)."""
    return "mns." + "".join(c if c.isalnum() or c in "-_" else "_" for c in queue_id)


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def sign(key: str, now: float, issuer: str = "pushpin", lifetime: int = 3600) -> str:
    """A `Grip-Sig` as the tier makes it (HS256 JWT with `iss` and `exp`): for tests and the benchmarks."""
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


class Held(Exception):  # noqa: N818 (an answer, not an error)
    """No message is receivable: hold the request on `channel` until `deadline_ms` (the answer to give then is the
    queue's MessageNotExist, `timeout_answer`), unless a wake asks the origin again first."""

    def __init__(self, channel: str, deadline_ms: int, now_ms: int, due_ms: int | None) -> None:
        super().__init__(channel)
        self.channel, self.deadline_ms, self.now_ms, self.due_ms = channel, deadline_ms, now_ms, due_ms

    @staticmethod
    def timeout_answer() -> errors.MnsError:
        return errors.MessageNotExist()

    def headers(self) -> dict[str, str]:
        # Whole seconds (the deadline leaves 2 s to spare before the platform's timeout).
        timeout = max(PUSHPIN_MIN_HOLD_SECONDS, round((self.deadline_ms - self.now_ms) / 1000))
        held = {
            "Grip-Hold": "response",
            "Grip-Channel": self.channel,
            "Grip-Timeout": str(timeout),
            DEADLINE_HEADER: str(self.deadline_ms),
        }
        if self.due_ms is not None and self.due_ms < self.deadline_ms:
            held[DUE_HEADER] = str(self.due_ms)
        return held


@dataclass
class HeldWait:
    """A receive that came through the tier: how long its client still waits, and what the origin tells the tier
    about the queue after claiming (`hints`, answer headers)."""

    first_deadline_ms: int | None  # the tier's `Mns-Wait-Deadline` when it asks again, else None (first arrival)
    hints: dict[str, str] = field(default_factory=dict)

    def deadline(self, arrived_ms: int, wait_seconds: int, max_poll_seconds: float) -> int:
        """When the client stops waiting: `wait_seconds` after its first arrival (`arrived_ms` then, or the deadline
        it carries back), never later than the last claim the platform's timeout allows."""
        last_claim = arrived_ms + int(max_poll_seconds * 1000)
        if self.first_deadline_ms is None:
            return min(arrived_ms + wait_seconds * 1000, last_claim)
        return min(self.first_deadline_ms, last_claim)


def held_wait(headers: dict[str, str], key: str, now: float) -> HeldWait | None:
    """The tier's wait of a request (lower-cased `headers`), None for a request that did not come through the
    tier (no `Grip-Sig`, or no key: the tier is off). A `Grip-Sig` that does not verify is refused."""
    token = headers.get(SIG_HEADER)
    if token is None or not key:
        return None
    if not verify(token, key, now):
        raise errors.AccessDenied("The Grip-Sig header is not signed by this service's wait tier.")
    deadline = headers.get(DEADLINE_HEADER.lower(), "")
    return HeldWait(int(deadline) if deadline.isdigit() else None)
