"""A signature the server computed against the one a request carries, in constant time and for any text sent.

`hmac.compare_digest` raises TypeError on a str with a character outside ASCII; a request may put any bytes in
its signature field (a v1 `Signature=%C3%A9`, a header the front end decoded as Latin-1), so both sides are
compared as bytes and a foreign character is simply a signature that does not match."""

from __future__ import annotations

import hmac


def matches(computed: str, sent: str) -> bool:
    return hmac.compare_digest(computed.encode("utf-8", "surrogatepass"), sent.encode("utf-8", "surrogatepass"))
