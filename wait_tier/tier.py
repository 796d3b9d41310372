"""One instance of the wait tier: the waker and its Pushpin, started and stopped together."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import ThreadingHTTPServer
from pathlib import Path
from threading import Event

from wait_tier import pushpin
from wait_tier.waker import READY_PATH, Pushpin, Waker, serve


@dataclass
class Tier:
    origin: str  # the service's URL (the local server, or the receive function's URL)
    port: int  # clients reach Pushpin here
    control_port: int  # Pushpin's `/publish/`
    waker_port: int  # `POST /wake`, and Pushpin's origin
    key: str  # Grip-Sig's key (the origin verifies it)
    directory: Path
    bind: str = "127.0.0.1"
    peers: Callable[[], list[str]] = lambda: []
    waker: Waker | None = field(default=None, init=False)
    wake_url: str = field(default="", init=False)  # where the service posts wakes
    _process: subprocess.Popen[bytes] | None = field(default=None, init=False, repr=False)
    _server: tuple[ThreadingHTTPServer, Event] | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        self.wake_url = f"http://127.0.0.1:{self.waker_port}/wake"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> Tier:
        control = f"http://127.0.0.1:{self.control_port}"
        self.waker = Waker(self.origin, Pushpin(control), self.peers)
        self._server = serve(self.waker, self.bind, self.waker_port)
        config = pushpin.PushpinConfig(
            self.directory, self.port, self.control_port, f"127.0.0.1:{self.waker_port}", self.key
        )
        self._process = pushpin.start(config, READY_PATH, bind=self.bind)
        return self

    def stop(self, kill: bool = False) -> None:
        """Stop Pushpin (SIGKILL when `kill`: a crash) and the waker; what they held is gone."""
        if self._process is not None:
            pushpin.stop(self._process, kill=kill)
            self._process = None
        if self._server is not None:
            server, stop = self._server
            stop.set()
            server.shutdown()
            server.server_close()
            self._server = None
