"""A TCP listener on 127.0.0.1 for endpoints that answer pushes by hand, byte by byte."""

from __future__ import annotations

import socket
import threading
import time


class LoopbackListener:
    """Accepts connections on a free loopback port and serves each on a thread of its own (`serve`, which a
    subclass writes). `accepted` holds when each came (time.monotonic()), in order."""

    def __init__(self) -> None:
        self.accepted: list[float] = []
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._listener.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self._listener.accept()
            except OSError:
                return
            self.accepted.append(time.monotonic())
            threading.Thread(target=self.serve, args=(connection, self.accepted[-1]), daemon=True).start()

    def serve(self, connection: socket.socket, accepted_at: float) -> None:
        raise NotImplementedError

    def close(self) -> None:
        self._listener.close()
