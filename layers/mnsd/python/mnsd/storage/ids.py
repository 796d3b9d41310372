"""Message ids as the storage engines make them: `{16 hex}-{slot}-{ms hex}-{9 digits}`, the slot the engine's."""

from __future__ import annotations

import secrets


def new_message_id(now_ms: int, slot: int = 1) -> str:
    """A new message id, `{16 hex}-{slot}-{ms hex}-{9 digits}`: the slot (a positive number) is the storage engine's
    to choose (`MessageStore.new_ids`: the DynamoDB engine names the message's partition by it)."""
    return f"{secrets.token_hex(8).upper()}-{slot}-{now_ms:X}-{secrets.randbelow(10**9):09d}"


def message_id_time(message_id: str) -> int | None:
    """The time (ms) a message id was made at (`new_message_id`); None for an id of another shape."""
    parts = message_id.split("-")
    if len(parts) != 4:
        return None
    try:
        return int(parts[2], 16)
    except ValueError:
        return None
