"""Receiving what a queue holds, as the integration tests check it."""

from __future__ import annotations

from mnsd.ground import errors

ACCOUNT = "1000000000000001"


def receive_all(service, name: str = "q", rounds: int = 50) -> list:
    """Receive 16 at a time until the queue has nothing visible (`rounds` receives at the most): all received."""
    got: list = []
    for _ in range(rounds):
        try:
            got += service.receive(ACCOUNT, name, 16, 0)
        except errors.MessageNotExist:
            break
    return got
