"""The waker's origin connections (`wait_tier.origin`): kept alive and shared by the waker's threads."""

import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from wait_tier.origin import Origin


def serving(closing: bool = False) -> tuple[ThreadingHTTPServer, list[int]]:
    """An origin answering every request, remembering the client port of each (one per connection)."""
    ports: list[int] = []

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002
            pass

        def do_GET(self) -> None:  # noqa: N802 (the standard library's name)
            ports.append(self.client_address[1])
            self.send_response(200)
            self.send_header("Content-Length", "2")
            if closing:
                self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(b"ok")

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, ports


def test_requests_of_different_threads_one_after_another_share_one_connection() -> None:
    server, ports = serving()
    origin = Origin(f"http://127.0.0.1:{server.server_address[1]}")
    try:
        for _ in range(4):
            thread = threading.Thread(target=origin.call, args=("GET", "/x", [("Host", "h")], b""))
            thread.start()
            thread.join()
        assert len(ports) == 4 and len(set(ports)) == 1
    finally:
        origin.close()
        server.shutdown()
        server.server_close()


def test_a_connection_the_origin_closes_is_not_reused_and_a_stale_one_is_replaced() -> None:
    server, ports = serving(closing=True)
    origin = Origin(f"http://127.0.0.1:{server.server_address[1]}")
    try:
        assert origin.call("GET", "/x", [("Host", "h")], b"")[3] == b"ok"
        assert origin.call("GET", "/x", [("Host", "h")], b"")[3] == b"ok"
        assert len(set(ports)) == 2
    finally:
        server.shutdown()
        server.server_close()
    server, ports = serving()
    origin = Origin(f"http://127.0.0.1:{server.server_address[1]}")
    try:
        origin.call("GET", "/x", [("Host", "h")], b"")
        origin._idle[0].sock.shutdown(socket.SHUT_RDWR)  # (as if the origin had closed it while idle)
        assert origin.call("GET", "/x", [("Host", "h")], b"")[0] == 200
    finally:
        origin.close()
        server.shutdown()
        server.server_close()
