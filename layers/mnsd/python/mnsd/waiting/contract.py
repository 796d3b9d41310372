"""What the wait tier (`wait_tier/`) and the service (the origin) say to each other: the one place both import
(the standard library only: the tier's image carries this file and no more of the layer).

- The tier forwards a client's receive to the origin signed with the key both hold (`SIG_HEADER`, `sign`/`verify`:
  an HS256 JWT), and, when it asks again for a receive it holds, with the client's deadline (`DEADLINE_HEADER`).
- The origin answers a receive through the tier either with what it claimed (`CLAIMED_HEADER`, `MORE_HEADER`:
  receivable messages it saw and left; `DUE_HEADER`: when the first claimed lease ends) or, when nothing is
  receivable, with the answer to give when the wait ends plus `HOLD_HEADER` (hold until then, ms) and `DUE_HEADER`
  when a delayed or invisible message becomes receivable before it. `CHANNEL_HEADER` names the queue's channel in
  both. The tier removes all of these before its client sees the answer.
- Whatever makes a message receivable posts a wake (`wake_document`) to the tier's `WAKE_PATH`; or, when the request
  that made it receivable came through the tier (signed by it), tells it in that request's answer (`WAKES_HEADER`:
  the wake documents, `wakes_header`/`read_wakes`), which the tier takes as a posted wake.
- Single sends, deletes and receives of one queue that reach the tier within a few milliseconds go to the origin as
  one call (`BATCH_PATH`, signed as the tier's batch: `sign(..., issuer=BATCH_ISSUER)`), which carries each client's
  own request whole (`batch_document`) and is answered with each one's own answer (`answers_document`): the origin
  authenticates and authorizes each request as if it had come alone (`mnsd.request.coalesced`).
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
WAKES_HEADER = "Mns-Wait-Wakes"  # the wakes of a request the tier passed on, in its answer (no post: `wakes_header`)
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
BATCH_PATH = "/wait-tier/batch"
# The issuer of a batch call's signature: the tier signs each request it passes on as `wait-tier`, so a client's own
# request to `BATCH_PATH`, passed on, is not taken for the tier's batch.
BATCH_ISSUER = "wait-tier-batch"
STATS_PATH = "/wait-tier/stats"


def channel(queue_id: str) -> str:
    """The queue's channel: the name wakes and answers give it."""
    return "mns." + "".join(c if c.isalnum() or c in "-_" else "_" for c in queue_id)


def wake_document(queue_id: str, count: int | None = None, at_ms: int | None = None) -> dict[str, object]:
    """A wake: `count` messages receivable now, or one at `at_ms`."""
    if at_ms is not None:
        return {"channel": channel(queue_id), "at": at_ms}
    return {"channel": channel(queue_id), "count": count or 1}


def wakes_header(wakes: list[dict[str, object]]) -> str:
    """The wakes of a request through the tier, as its answer's `WAKES_HEADER` (a JSON list of wake documents)."""
    return json.dumps(wakes, separators=(",", ":"))


def read_wakes(value: str) -> list[dict[str, object]]:
    """The wake documents of an answer's `WAKES_HEADER` (ValueError: not a list of them)."""
    found = json.loads(value)
    if not isinstance(found, list) or not all(isinstance(w, dict) and "channel" in w for w in found):
        raise ValueError("not a list of wakes")
    return found


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


def verify(token: str, key: str, now: float, issuer: str | None = None) -> bool:
    """Whether `token` is a JWT signed HS256 with `key` and not expired (and issued by `issuer`, when named)."""
    try:
        header, claims, mac = token.split(".")
        expected = hmac.new(key.encode(), f"{header}.{claims}".encode(), hashlib.sha256).digest()
        if not hmac.compare_digest(expected, _unb64(mac)):
            return False
        if json.loads(_unb64(header)).get("alg") != "HS256":
            return False
        said = json.loads(_unb64(claims))
        expires = said.get("exp")
        if issuer is not None and said.get("iss") != issuer:
            return False
    except (ValueError, TypeError, AttributeError):
        return False
    return isinstance(expires, int | float) and expires > now


def batch_document(requests: list[tuple[str, str, list[tuple[str, str]], bytes, int | None]]) -> bytes:
    """A batch call's body: each client's request as it came (method, path with its query, headers, body) and, for a
    receive the tier asks again, its client's deadline (ms)."""
    return json.dumps(
        {
            "requests": [
                {"method": m, "path": p, "headers": [list(h) for h in hs], "body": _b64(b), "deadline": d}
                for m, p, hs, b, d in requests
            ]
        }
    ).encode()


def read_batch(document: bytes) -> list[tuple[str, str, list[tuple[str, str]], bytes, int | None]]:
    """The requests of a batch call's body (ValueError: not one)."""
    try:
        found = json.loads(document)["requests"]
        requests = []
        for each in found:
            deadline = each.get("deadline")
            if deadline is not None and not isinstance(deadline, int):
                raise ValueError("deadline")
            headers = [(str(k), str(v)) for k, v in each["headers"]]
            requests.append((str(each["method"]), str(each["path"]), headers, _unb64(str(each["body"])), deadline))
    except (KeyError, TypeError, AttributeError) as error:
        raise ValueError(f"not a batch: {error}") from None
    return requests


def answers_document(answers: list[tuple[int, dict[str, str], bytes]]) -> bytes:
    """A batch call's answer: each request's own (status, headers, body), in the order of the requests."""
    return json.dumps(
        {"answers": [{"status": s, "headers": [[k, v] for k, v in h.items()], "body": _b64(b)} for s, h, b in answers]}
    ).encode()


def read_answers(document: bytes) -> list[tuple[int, list[tuple[str, str]], bytes]]:
    """The answers of a batch call's answer (ValueError: not one)."""
    try:
        found = json.loads(document)["answers"]
        return [(int(a["status"]), [(str(k), str(v)) for k, v in a["headers"]], _unb64(str(a["body"]))) for a in found]
    except (KeyError, TypeError, AttributeError) as error:
        raise ValueError(f"not a batch's answers: {error}") from None
