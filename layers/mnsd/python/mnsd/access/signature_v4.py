"""The V4 request signature (MNS4-HMAC-SHA256): Java SDK 2.0's default and the only one of Alibaba's Tea gateway.

`Authorization: MNS4-HMAC-SHA256 Credential={KeyId}/{yyyyMMdd}/{region}/mns/aliyun_v4_request,Signature={hex}`

- string to sign: the algorithm, the request time (`yyyyMMdd'T'HHmmss'Z'`, UTC, of the Date header), the credential
  scope (`{yyyyMMdd}/{region}/mns/aliyun_v4_request`) and the canonical request, one per line;
- canonical request: the method; the path, percent-encoded with its slashes kept; the query, names lower-cased,
  names and values trimmed and percent-encoded, sorted by name, a name alone when its value is empty, joined by
  `&`; the signed headers (`content-type`, `content-md5` and `x-mns-*`), `name:value` lines sorted by name; an
  empty line;
- signing key: HMAC-SHA256 of the scope's date keyed by `aliyun_v4` + secret, then of the region, of `mns` and of
  `aliyun_v4_request`, each keyed by the one before; the signature is the hex HMAC-SHA256 of the string to sign.

Apsara Stack's variant (`APSARA-MNS4-HMAC-SHA256`, `apsara_v4`, `apsara_v4_request`) differs only in those words.
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass
from datetime import UTC, datetime
from urllib.parse import parse_qsl, quote, unquote

from mnsd.access.signature_match import matches
from mnsd.ground import errors
from mnsd.ground.http import HttpRequest

PRODUCT = "mns"
# algorithm -> (prefix of the secret, the scope's last word)
ALGORITHMS = {
    "MNS4-HMAC-SHA256": ("aliyun_v4", "aliyun_v4_request"),
    "APSARA-MNS4-HMAC-SHA256": ("apsara_v4", "apsara_v4_request"),
}
SIGNED_HEADERS = ("content-type", "content-md5")


@dataclass(frozen=True)
class V4Credential:
    """What a V4 Authorization header names: the algorithm, the key, the scope and the signature."""

    algorithm: str
    key_id: str
    date: str  # yyyyMMdd
    region: str
    product: str
    terminator: str
    signature: str

    @property
    def scope(self) -> str:
        return f"{self.date}/{self.region}/{self.product}/{self.terminator}"

    def check_scope(self, region: str, request_time: datetime) -> None:
        """The scope names this service, this endpoint's region and the request's own date, or nothing is signed."""
        terminator = ALGORITHMS[self.algorithm][1]
        if self.product != PRODUCT or self.terminator != terminator:
            raise errors.SignatureDoesNotMatch(
                f"The credential scope names the service {self.product}/{self.terminator}; "
                f"this endpoint signs {PRODUCT}/{terminator}."
            )
        if self.region != region:
            raise errors.SignatureDoesNotMatch(
                f"The credential scope names the region {self.region}; this endpoint serves the region {region}."
            )
        if self.date != request_time.strftime("%Y%m%d"):
            raise errors.SignatureDoesNotMatch(
                f"The credential scope's date {self.date} is not the date of the request's Date header "
                f"({request_time.strftime('%Y%m%d')})."
            )

    def matches(self, secret: str, request: HttpRequest, request_time: datetime) -> bool:
        unsigned = query_read_otherwise(request.raw_query)
        if unsigned is not None:
            raise errors.SignatureDoesNotMatch(
                f"The query parameter {unsigned!r} is read otherwise than the V4 signature covers it: send each "
                "parameter once, without spaces around its name or value and without '+' for a space."
            )
        expected = signature(secret, self, request, request_time)
        return matches(expected, self.signature.lower())


def parse(authorization: str) -> V4Credential | None:
    """The credential of a V4 Authorization header; None when the header is of another scheme.

    Raises InvalidAuthorizationHeader when it is V4 but not well formed."""
    algorithm, _, rest = authorization.strip().partition(" ")
    if algorithm not in ALGORITHMS:
        return None
    fields = dict(part.strip().partition("=")[::2] for part in rest.split(","))
    scope = fields.get("Credential", "").rsplit("/", 4)
    sent = fields.get("Signature", "")
    if len(scope) != 5 or not all(scope) or not sent:
        raise errors.InvalidAuthorizationHeader(
            f"The Authorization header should be {algorithm} Credential=AccessKeyId/Date/Region/mns/"
            f"{ALGORITHMS[algorithm][1]},Signature=Signature."
        )
    key_id, date, region, product, terminator = scope
    return V4Credential(algorithm, key_id, date, region, product, terminator, sent)


def _encode(text: str, keep: str = "") -> str:
    """Percent-encoding of UTF-8 with only letters, digits and `-_.~` (and `keep`) left as they are."""
    return quote(text, safe=keep)


def query_read_otherwise(raw_query: str) -> str | None:
    """The first query parameter the service would read otherwise than the canonical request signs it, if any.

    The canonical request trims names and values, lower-cases names, keeps `+` as it is and keeps one value of a
    name; the routes read the query as a form (`mnsd.ground.http.HttpRequest.query`: `+` a space, nothing trimmed, the
    first value of a name). Where the two differ, a signed `?peekonly=true` could be read as a receive (a name
    sent again before it, or with a space around it): such a query is refused, not guessed at."""
    seen: set[str] = set()
    for part in raw_query.split("&"):
        if not part:
            continue
        name, _, value = part.partition("=")
        signed = (unquote(name).strip().lower(), unquote(value).strip())
        read = [(key.lower(), given) for key, given in parse_qsl(part, keep_blank_values=True)]
        if read != [signed] or signed[0] in seen:
            return signed[0]
        seen.add(signed[0])
    return None


def canonical_request(request: HttpRequest) -> str:
    path = _encode(unquote(request.path) or "/", keep="/")
    params: dict[str, str] = {}
    for part in request.raw_query.split("&"):
        if part:
            name, _, value = part.partition("=")
            params[_encode(unquote(name).strip().lower())] = _encode(unquote(value).strip())
    query = "&".join(f"{name}={value}" if value else name for name, value in sorted(params.items()))
    headers = "".join(
        f"{name}:{request.headers[name].strip()}\n"
        for name in sorted(request.headers)
        if name in SIGNED_HEADERS or name.startswith("x-mns-")
    )
    return f"{request.method.upper()}\n{path}\n{query}\n{headers}\n"


def string_to_sign(credential: V4Credential, request: HttpRequest, request_time: datetime) -> str:
    moment = request_time.astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")
    return f"{credential.algorithm}\n{moment}\n{credential.scope}\n{canonical_request(request)}"


def signing_key(secret: str, credential: V4Credential) -> bytes:
    prefix, terminator = ALGORITHMS[credential.algorithm]
    key = (prefix + secret).encode("utf-8")
    for word in (credential.date, credential.region, credential.product, terminator):
        key = hmac.new(key, word.encode("utf-8"), hashlib.sha256).digest()
    return key


def signature(secret: str, credential: V4Credential, request: HttpRequest, request_time: datetime) -> str:
    text = string_to_sign(credential, request, request_time)
    return hmac.new(signing_key(secret, credential), text.encode("utf-8"), hashlib.sha256).hexdigest()
