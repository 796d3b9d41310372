"""The outcome of one delivery attempt (an attempt never raises)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Outcome:
    delivered: bool
    status: int = 0  # the endpoint's HTTP status, when there was one
    detail: str = ""
    permanent: bool = False  # a failure no retry mends: the push is given up at once
