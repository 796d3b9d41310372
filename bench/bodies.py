"""Message bodies as clients send them, deterministic from a seeded `random.Random`: incompressible (base64 of
random bytes, as binary or encrypted payloads are sent) and JSON-like (an order with its lines), by size."""

from __future__ import annotations

import base64
import json
import random
import string
from collections.abc import Callable
from typing import Any


def incompressible(size: int, rng: random.Random) -> str:
    """`size` characters of base64 of random bytes (what a client's base64-encoded binary or encrypted body is)."""
    return base64.b64encode(rng.randbytes(size))[:size].decode()


def json_like(size: int, rng: random.Random) -> str:
    """A JSON document of about `size` bytes: an order with its lines, ids, names and amounts (compresses about
    as much as real JSON events do, not as a repeated character)."""
    words = ["alpha", "bravo", "delta", "omega", "north", "south", "parcel", "invoice", "express", "standard"]
    order: dict[str, Any] = {
        "orderId": f"ORD-{rng.randrange(10**11):011d}",
        "customer": {"id": rng.randrange(10**9), "name": f"{rng.choice(words).title()} {rng.choice(words).title()}"},
        "createdAt": f"2026-11-{rng.randrange(1, 29):02d}T{rng.randrange(24):02d}:{rng.randrange(60):02d}:00Z",
        "lines": [],
    }
    while len(json.dumps(order)) < size - 120:
        order["lines"].append(
            {
                "sku": "".join(rng.choices(string.ascii_uppercase + string.digits, k=10)),
                "qty": rng.randrange(1, 20),
                "price": round(rng.uniform(1, 500), 2),
                "note": rng.choice(words),
            }
        )
    text = json.dumps(order)
    return text + " " * (size - len(text)) if len(text) < size else text[:size]


BODIES: dict[str, Callable[[random.Random], str]] = {
    "64 B": lambda rng: incompressible(64, rng),
    "1 KB JSON-like": lambda rng: json_like(1024, rng),
    "1 KB incompressible": lambda rng: incompressible(1024, rng),
    "60 KB incompressible": lambda rng: incompressible(60 * 1024, rng),
}
