"""Connections of the local server, served by bounded means whatever their number over time.

- Open connections: at most `connection_limit()` (from the process's open-file limit, less what the engine and the
  rest of the process keep), each one file. A connection past it is answered `503 ServiceUnavailable` (an MNS
  error the SDKs retry) by a refuser thread, then closed.
- Threads: a request is handled by one of at most `MAX_WORKERS` worker threads, started as the load asks and kept.
  A kept-alive connection between two requests holds no thread: one watcher thread waits for its next request
  (`handler.IDLE_TIMEOUT_SECONDS` at most, then closes it) and hands it to a worker when its bytes arrive. A worker
  with nothing else waiting for it first lingers `LINGER_SECONDS` on the connection it served: a client's next request
  that follows at once (an SDK's loop) is served without the two hand-overs. A long poll holds its worker while it
  waits (`local_runtime.waits` bounds how many wait at once).
- A client that went away (reset, broken pipe, timed out) only ends its connection: it is no error.
"""

from __future__ import annotations

import queue
import resource
import select
import selectors
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

from local_runtime import handler as requests
from mnsd.ground import errors

MAX_WORKERS = 96
# Files the process keeps besides its client connections: the engine's (SQLite's pool: 8 x the database, its WAL and
# shared memory), the listening socket, the watcher's, logs, the interpreter's own, the refusals waiting.
RESERVED_FILES = 64
MAX_CONNECTIONS = 1024
REFUSALS_WAITING = 16  # connections past the limit waiting for their 503 (within RESERVED_FILES); past these, closed
REFUSAL_SECONDS = 2.0  # how long a refused connection's request may take to arrive
LISTEN_BACKLOG = 1024  # connections waiting to be accepted (the standard library's 5 refuses bursts of clients)
# How long a worker waits for the next request of the connection it served, when no other connection waits for it.
LINGER_SECONDS = 0.02
_CLIENT_GONE = (ConnectionError, TimeoutError)


def connection_limit(files: int | None = None) -> int:
    """The connections open at once: what the open-file limit (`files`, else the process's) leaves, within bounds."""
    if files is None:
        files = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    if files == resource.RLIM_INFINITY:
        files = MAX_CONNECTIONS + RESERVED_FILES
    return max(8, min(MAX_CONNECTIONS, files - RESERVED_FILES))


class Connection:
    """A client connection and the request handler that reads and answers its requests, one at a time."""

    def __init__(self, server: LocalHttpServer, sock: socket.socket, address: Any) -> None:
        self.sock = sock
        handler_class: type[BaseHTTPRequestHandler] = server.RequestHandlerClass  # type: ignore[assignment]
        self.handler: Any = handler_class.__new__(handler_class)
        self.handler.request, self.handler.client_address, self.handler.server = sock, address, server
        self.handler.setup()
        self.since = time.monotonic()

    def serve_one(self) -> bool:
        """Handle the connection's next request; whether the connection stays open for another."""
        self.handler.close_connection = True
        try:
            self.handler.handle_one_request()
        except _CLIENT_GONE:  # the client went away: no error of the server's
            return False
        except Exception as error:  # a fault of the server's own: one line, the connection ended, the worker kept
            print(f"connection from {self.handler.client_address[0]}: {type(error).__name__}: {error}", flush=True)
            return False
        return not self.handler.close_connection

    def pending(self) -> bool:
        """Whether the next request's bytes are already read (pipelined): no wait on the socket would see them."""
        return bool(self.handler.buffered_bytes())

    def next_within(self, seconds: float) -> bool:
        """Whether the next request (or the connection's end) arrives within `seconds` (poll: `select` cannot watch
        a descriptor past 1,023)."""
        if self.pending():
            return True
        poller = select.poll()
        poller.register(self.sock, select.POLLIN)
        return bool(poller.poll(seconds * 1000))

    def close(self) -> None:
        try:
            self.handler.finish()
        except (OSError, ValueError):
            pass
        try:
            self.sock.shutdown(socket.SHUT_WR)
        except OSError:
            pass
        self.sock.close()


class IdleWatch:
    """One thread waiting for the next request of every kept-alive connection (or its end, or its idle timeout)."""

    def __init__(self, ready: Any, closed: Any) -> None:
        self._ready = ready
        self._closed = closed
        self._selector = selectors.DefaultSelector()
        self._adding: queue.SimpleQueue[Connection | None] = queue.SimpleQueue()
        self._wake_in, self._wake_out = socket.socketpair()
        self._wake_in.setblocking(False)
        self._selector.register(self._wake_in, selectors.EVENT_READ)
        self._thread = threading.Thread(target=self._run, name="idle-connections", daemon=True)

    def start(self) -> IdleWatch:
        self._thread.start()
        return self

    def watch(self, connection: Connection) -> None:
        connection.since = time.monotonic()
        self._adding.put(connection)
        self._wake()

    def stop(self) -> None:
        self._adding.put(None)
        self._wake()
        self._thread.join(timeout=5)

    def _wake(self) -> None:
        try:
            self._wake_out.send(b"\0")
        except BlockingIOError:  # (already awake: its buffer is full of wake-ups)
            pass

    def _run(self) -> None:
        watched: dict[int, Connection] = {}
        while True:
            for key, _ in self._selector.select(timeout=1.0):
                if key.fileobj is self._wake_in:
                    try:
                        self._wake_in.recv(4096)
                    except BlockingIOError:
                        pass
                    continue
                self._selector.unregister(key.fileobj)
                self._ready(watched.pop(key.fd))
            while True:
                try:
                    connection = self._adding.get_nowait()
                except queue.Empty:
                    break
                if connection is None:
                    return self._end(watched)
                watched[connection.sock.fileno()] = connection
                self._selector.register(connection.sock, selectors.EVENT_READ)
            expired = time.monotonic() - requests.IDLE_TIMEOUT_SECONDS
            for fd, connection in [(fd, c) for fd, c in watched.items() if c.since < expired]:
                self._selector.unregister(connection.sock)
                del watched[fd]
                self._closed(connection)

    def _end(self, watched: dict[int, Connection]) -> None:
        for connection in watched.values():
            self._closed(connection)
        self._selector.close()
        self._wake_in.close()
        self._wake_out.close()


class LocalHttpServer(HTTPServer):
    """Accepts connections (within `max_connections`) and serves their requests on a bounded pool of workers."""

    request_queue_size = LISTEN_BACKLOG

    def __init__(
        self,
        address: tuple[str, int],
        handler: type[BaseHTTPRequestHandler],
        max_connections: int | None = None,
        max_workers: int = MAX_WORKERS,
    ) -> None:
        super().__init__(address, handler)
        self.max_connections = connection_limit() if max_connections is None else max_connections
        self.max_workers = max_workers
        self._lock = threading.Lock()
        self._open = 0
        self._workers = 0
        self._idle_workers = 0  # workers waiting for a connection
        self._queued = 0  # connections handed over, not yet taken by a worker
        self._ready: queue.SimpleQueue[Connection | None] = queue.SimpleQueue()
        self._refusals: queue.Queue[tuple[socket.socket, Any] | None] = queue.Queue(REFUSALS_WAITING)
        self._idle = IdleWatch(self._hand_over, self._close).start()
        threading.Thread(target=self._refuse_loop, name="refusals", daemon=True).start()

    @property
    def open_connections(self) -> int:
        return self._open

    @property
    def threads(self) -> int:
        return self._workers

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._lock:
            admitted = self._open < self.max_connections
            if admitted:
                self._open += 1
        if not admitted:
            try:
                self._refusals.put_nowait((request, client_address))
            except queue.Full:
                self.shutdown_request(request)
            return
        try:
            connection = Connection(self, request, client_address)
        except OSError:
            self._forget(request)
            return
        self._idle.watch(connection)

    def _hand_over(self, connection: Connection) -> None:
        """A connection whose next request arrived: to an idle worker, or a new one while under `max_workers`."""
        with self._lock:
            self._queued += 1
            start = self._queued > self._idle_workers and self._workers < self.max_workers
            if start:
                self._workers += 1
        if start:
            threading.Thread(target=self._work, name=f"worker-{self._workers}", daemon=True).start()
        self._ready.put(connection)

    def _work(self) -> None:
        with self._lock:
            self._idle_workers += 1
        while True:
            connection = self._ready.get()
            with self._lock:
                self._idle_workers -= 1
                if connection is None:
                    return
                self._queued -= 1
            keep = connection.serve_one()
            while keep and self._queued == 0 and connection.next_within(LINGER_SECONDS):
                keep = connection.serve_one()
            with self._lock:  # idle again before the connection can come back: its next request needs no new worker
                self._idle_workers += 1
            if not keep:
                self._close(connection)
            elif connection.pending():
                self._hand_over(connection)
            else:
                self._idle.watch(connection)

    def _close(self, connection: Connection) -> None:
        connection.close()
        self._forget(None)

    def _forget(self, request: Any) -> None:
        if request is not None:
            self.shutdown_request(request)
        with self._lock:
            self._open -= 1

    def _refuse_loop(self) -> None:
        while True:
            refused = self._refusals.get()
            if refused is None:
                return
            sock, address = refused
            try:
                connection = Connection(self, sock, address)
                connection.handler.refusal = errors.ServiceUnavailable(
                    f"The server holds {self.max_connections} connections at most: try again later."
                )
                connection.handler.request_seconds = connection.handler.idle_seconds = REFUSAL_SECONDS
                connection.serve_one()
                connection.close()
            except OSError:
                self.shutdown_request(sock)

    def server_close(self) -> None:
        super().server_close()
        self._idle.stop()
        with self._lock:
            workers = self._workers
        for _ in range(workers):
            self._ready.put(None)
        try:
            self._refusals.put_nowait(None)
        except queue.Full:
            pass
