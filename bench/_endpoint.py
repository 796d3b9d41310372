"""An HTTP push endpoint on 127.0.0.1 for the push benchmarks: each POST's body goes to `answer`, whose
status is the reply (an empty body)."""

from __future__ import annotations

import abc
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class PushEndpoint(abc.ABC):
    """Serves from construction on a thread of its own; `url(path)` reaches it, `server.shutdown()` ends it."""

    def __init__(self) -> None:
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                self.send_response(endpoint.answer(body))
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/{path}"

    @abc.abstractmethod
    def answer(self, body: bytes) -> int:
        """The HTTP status of the reply to a push of `body` (called on the server's threads)."""
