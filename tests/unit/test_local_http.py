"""The local server's HTTP front end, in process with a stub dispatch: body limits and slow clients."""

from __future__ import annotations

import http.client
import io
import socket
import threading
import time
from email.message import Message

import pytest

from local_runtime import connections
from local_runtime import handler as requests
from mnsd.ground import errors
from mnsd.ground.http import HttpResponse


def headers(**values: str) -> Message:
    message = Message()
    for name, value in values.items():
        message[name.replace("_", "-")] = value
    return message


class RecordingReader(io.BytesIO):
    def __init__(self, data: bytes) -> None:
        super().__init__(data)
        self.reads: list[int] = []

    def read1(self, size: int = -1) -> bytes:
        self.reads.append(size)
        return super().read1(size)


@pytest.mark.parametrize(
    "length", ["abc", "1" * 30, "-1", "+5", "1_0", "\u0665", "0x10", str(requests.MAX_BODY_BYTES + 1)]
)
def test_an_invalid_or_oversized_length_is_refused_before_reading(length):
    reader = RecordingReader(b"x" * 100)
    with pytest.raises(errors.InvalidArgument):
        requests.read_body(headers(Content_Length=length), reader)
    assert reader.reads == []


def test_conflicting_lengths_and_chunked_bodies_are_refused():
    both = headers(Content_Length="5")
    both["Content-Length"] = "6"
    with pytest.raises(errors.InvalidArgument):
        requests.read_body(both, RecordingReader(b"x" * 10))
    with pytest.raises(errors.InvalidArgument):
        requests.read_body(headers(Transfer_Encoding="chunked"), RecordingReader(b"0\r\n\r\n"))


def test_the_body_is_read_in_bounded_chunks():
    body = b"y" * (requests.MAX_BODY_BYTES - 1)
    reader = RecordingReader(body)
    assert requests.read_body(headers(Content_Length=str(len(body))), reader) == body
    assert max(reader.reads) <= requests.READ_CHUNK_BYTES


def test_a_body_shorter_than_announced_ends_the_connection():
    with pytest.raises(TimeoutError):
        requests.read_body(headers(Content_Length="10"), RecordingReader(b"abc"))


class StubDispatch:
    def respond(self, method, target, headers, body, received_at, header_pairs=None) -> HttpResponse:
        return HttpResponse(204, b"", {"x-mns-request-id": "stub"})


@pytest.fixture
def short_timeouts(monkeypatch):
    monkeypatch.setattr(requests, "SOCKET_TIMEOUT_SECONDS", 0.5)
    monkeypatch.setattr(requests, "IDLE_TIMEOUT_SECONDS", 2.0)
    handler = type("Handler", (requests.RequestHandler,), {"dispatch": StubDispatch(), "quiet": True, "timeout": 0.5})
    httpd = connections.LocalHttpServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield httpd.server_address[:2]
    httpd.shutdown()
    httpd.server_close()


def closed_within(address, data: bytes, seconds: float, trickle: bytes = b"") -> bool:
    """Whether the server drops a client that sends `data` and then (optionally) trickles bytes."""
    with socket.create_connection(address, timeout=seconds) as sock:
        sock.sendall(data)
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                if trickle:
                    sock.sendall(trickle)
                sock.settimeout(0.2 if trickle else seconds)
                if sock.recv(1024) == b"":
                    return True
            except TimeoutError:
                continue
            except (ConnectionResetError, BrokenPipeError):
                return True
    return False


def test_the_server_has_a_finite_socket_timeout():
    assert requests.RequestHandler.timeout is not None
    assert 0 < requests.RequestHandler.timeout <= 60
    assert connections.LocalHttpServer.request_queue_size >= 200


def test_a_kept_alive_connection_waits_longer_than_a_request_may_take(short_timeouts):
    # The SDKs keep a connection per client object and fail (rather than reconnect) when a request with a
    # body meets a connection the server has closed: idle connections wait for the idle timeout.
    with socket.create_connection(short_timeouts, timeout=5) as sock:
        for _ in range(2):
            time.sleep(1.0)  # twice the request timeout, half the idle one
            sock.sendall(b"POST /queues/q/messages HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nab")
            answer = http.client.HTTPResponse(sock)
            answer.begin()
            answer.read()
            assert answer.status == 204


def test_an_idle_connection_is_closed_after_the_idle_timeout(short_timeouts):
    assert closed_within(short_timeouts, b"", seconds=4)


def test_a_client_that_stops_mid_headers_is_let_go(short_timeouts):
    assert closed_within(short_timeouts, b"GET /queues HTTP/1.1\r\nHost: x\r\n", seconds=3)


def test_a_client_trickling_its_headers_is_let_go(short_timeouts):
    # A byte every 0.2 s: no single read waits long, the request as a whole does.
    assert closed_within(short_timeouts, b"GET /queues HTTP/1.1\r\nX-Slow: ", seconds=4, trickle=b"a")


def test_a_client_trickling_its_body_is_let_go(short_timeouts):
    head = b"POST /queues/q/messages HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n"
    assert closed_within(short_timeouts, head, seconds=4, trickle=b"x")


class FailingDispatch:
    def respond(self, method, target, headers, body, received_at, header_pairs=None) -> HttpResponse:
        raise RuntimeError("the export failed")


def test_a_failure_outside_the_handlers_is_still_an_mns_answer(capsys):
    handler = type("Handler", (requests.RequestHandler,), {"dispatch": FailingDispatch(), "quiet": True})
    httpd = connections.LocalHttpServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        with socket.create_connection(httpd.server_address[:2], timeout=5) as sock:
            sock.sendall(b"POST /-/exports HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n")
            answer = http.client.HTTPResponse(sock)
            answer.begin()
            body = answer.read()
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert answer.status == 500
    assert answer.getheader("x-mns-request-id")
    assert b"<Code>InternalError</Code>" in body
    assert "the export failed" in capsys.readouterr().err


@pytest.fixture
def stub_server():
    handler = type("Handler", (requests.RequestHandler,), {"dispatch": StubDispatch(), "quiet": True})
    httpd = connections.LocalHttpServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield httpd.server_address[:2]
    httpd.shutdown()
    httpd.server_close()


def refused_and_cut(address, piece: bytes, pause: float, seconds: float) -> tuple[bytes, float]:
    """Announce a 1 GB body and keep sending it: (the answer read meanwhile, when the server cut the connection)."""
    started = time.monotonic()
    with socket.create_connection(address, timeout=seconds) as sock:
        sock.sendall(b"POST /queues/q/messages HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000000\r\n\r\n")
        answer = b""
        try:
            while time.monotonic() - started < seconds:
                sock.sendall(piece)
                time.sleep(pause)
                sock.setblocking(False)
                try:
                    answer += sock.recv(65536)
                except BlockingIOError:
                    pass
                sock.setblocking(True)
        except (BrokenPipeError, ConnectionResetError):
            elapsed = time.monotonic() - started
            return answer + unread(sock), elapsed
    raise AssertionError("the server went on reading a refused body")


def unread(sock: socket.socket) -> bytes:
    """What reached the socket before the server cut it (a send can fail on the reset with the answer still unread)."""
    sock.setblocking(False)
    received = b""
    try:
        while chunk := sock.recv(65536):
            received += chunk
    except (BlockingIOError, ConnectionResetError):
        pass
    return received


def test_a_refused_body_is_read_at_most_drain_seconds(stub_server, monkeypatch):
    monkeypatch.setattr(requests, "DRAIN_SECONDS", 0.5)
    answer, elapsed = refused_and_cut(stub_server, b"x" * 1024, pause=0.02, seconds=5)
    assert answer.startswith(b"HTTP/1.1 400 ") and b"<Code>InvalidArgument</Code>" in answer
    assert 0.4 < elapsed < 2.5, elapsed


def test_a_refused_body_is_read_at_most_drain_bytes(stub_server, monkeypatch):
    monkeypatch.setattr(requests, "DRAIN_BYTES", 256 * 1024)
    monkeypatch.setattr(requests, "DRAIN_SECONDS", 60.0)
    answer, elapsed = refused_and_cut(stub_server, b"x" * 65536, pause=0.0, seconds=10)
    assert answer.startswith(b"HTTP/1.1 400 ")
    assert elapsed < 5, elapsed


class SlowDispatch:
    def respond(self, method, target, headers, body, received_at, header_pairs=None) -> HttpResponse:
        time.sleep(0.3)  # the client leaves meanwhile
        return HttpResponse(200, b"x" * 1_000_000, {"x-mns-request-id": "slow"})


def test_a_client_that_went_away_is_no_error_and_its_worker_serves_on(capsys):
    handler = type("Handler", (requests.RequestHandler,), {"dispatch": SlowDispatch(), "quiet": True})
    httpd = connections.LocalHttpServer(("127.0.0.1", 0), handler, max_workers=1)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        for _ in range(3):  # reset mid-answer (linger 0: RST), three times on the one worker
            sock = socket.create_connection(httpd.server_address[:2], timeout=5)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
            sock.sendall(b"GET /queues HTTP/1.1\r\nHost: x\r\n\r\n")
            sock.close()
            time.sleep(0.5)
        connection = http.client.HTTPConnection(*httpd.server_address[:2], timeout=5)
        connection.request("GET", "/queues")
        assert connection.getresponse().status == 200
        connection.close()
        time.sleep(0.2)
        assert httpd.open_connections == 0 and httpd.threads == 1
    finally:
        httpd.shutdown()
        httpd.server_close()
    printed = capsys.readouterr()
    assert "Traceback" not in printed.err + printed.out and "Error" not in printed.err + printed.out


def test_a_clients_next_request_that_follows_at_once_is_served_by_the_same_worker(monkeypatch):
    """A worker lingers on the connection it served: back-to-back requests of one kept-alive client are not handed
    to the watcher and back between each two (the cost of the bounded server over a thread per connection)."""
    handler = type("Handler", (requests.RequestHandler,), {"dispatch": StubDispatch(), "quiet": True})
    httpd = connections.LocalHttpServer(("127.0.0.1", 0), handler, max_workers=2)
    watched = []
    watch = httpd._idle.watch
    monkeypatch.setattr(httpd._idle, "watch", lambda connection: (watched.append(connection), watch(connection)))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        connection = http.client.HTTPConnection(*httpd.server_address[:2], timeout=5)
        for _ in range(20):
            connection.request("GET", "/queues")
            answer = connection.getresponse()
            assert (answer.status, answer.read()) == (204, b"")
        assert len(watched) <= 3  # (its arrival; a pause of the client's longer than the linger, rarely)
        time.sleep(connections.LINGER_SECONDS * 3)
        assert len(watched) <= 4  # after the linger, the idle connection is the watcher's, not a worker's
        connection.request("GET", "/queues")
        answer = connection.getresponse()
        assert (answer.status, answer.read()) == (204, b"")
        connection.close()
    finally:
        httpd.shutdown()
        httpd.server_close()
