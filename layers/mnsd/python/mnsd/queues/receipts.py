"""Receipt handles: signed, single-use tokens naming one lease version of one message.

A handle carries the queue incarnation, the message's storage key, the lease version it was issued
for and its NextVisibleTime, under an HMAC. Forged or mangled handles fail the MAC
(ReceiptHandleError); genuine but stale ones fail the conditional write or the time check
(MessageNotExist). Only `[A-Za-z0-9_-]` appears in a handle: it travels unencoded in query strings.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
from dataclasses import dataclass

from mnsd.ground import errors

_MAC_CHARS = 22  # 16 bytes of HMAC-SHA256, base64url without padding


@dataclass(frozen=True)
class Receipt:
    queue_id: str
    key: str
    version: int
    visible_at: int  # ms


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class ReceiptCodec:
    def __init__(self, secret: str) -> None:
        self._secret = secret.encode("utf-8")

    def _mac(self, payload: bytes) -> str:
        return _b64(hmac.new(self._secret, payload, hashlib.sha256).digest()[:16])

    def encode(self, receipt: Receipt) -> str:
        payload = f"{receipt.queue_id}|{receipt.key}|{receipt.version}|{receipt.visible_at}".encode()
        return self._mac(payload) + _b64(payload)

    def decode(self, handle: str | None, queue_id: str) -> Receipt:
        if not handle:
            raise errors.MissingReceiptHandle()
        mac, encoded = handle[:_MAC_CHARS], handle[_MAC_CHARS:]
        try:
            payload = _unb64(encoded)
        except (binascii.Error, ValueError):
            raise errors.ReceiptHandleError() from None
        if not encoded or not hmac.compare_digest(mac.encode("utf-8"), self._mac(payload).encode("ascii")):
            raise errors.ReceiptHandleError()
        owner, key, version, visible_at = payload.decode().split("|")
        if owner != queue_id:
            raise errors.ReceiptHandleError()
        return Receipt(owner, key, int(version), int(visible_at))
