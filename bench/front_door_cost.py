"""What the load balancer front door (`-c frontDoor=alb`, docs/front-door.md) costs per million requests: the bytes
a request and its answer carry, measured on the wire of the local server with the ALB door (the Python SDK sending,
receiving and deleting 1 KB incompressible messages one at a time, through a counting relay), and the rules each
request goes through (`mnsd.request.listener`), priced at ALB's LCU rates; beside API Gateway's HTTP API price.

    .venv/bin/python -m bench.front_door_cost [--messages 300]
"""

from __future__ import annotations

import argparse
import base64
import functools
import os
import socket
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from bench._common import md_table, use_local_aws_defaults, write_result
from bench.wire import Wire
from tests.support.loopback import LoopbackListener

# AWS's Elastic Load Balancing pricing page, US East (N. Virginia), found 7 December 2026 (docs/front-door.md).
ALB_HOUR = 0.0225
LCU_HOUR = 0.008
LAMBDA_GB_PER_LCU_HOUR = 0.4  # processed bytes, Lambda targets
RULES_PER_LCU_SECOND = 1000
FREE_RULES = 10
NEW_CONNECTIONS_PER_LCU_SECOND = 25
HTTP_API_PER_MILLION = 1.00  # the first 300 million requests of a month
HOURS_PER_MONTH = 730


class CountingRelay(LoopbackListener):
    """127.0.0.1:port -> the server, counting the bytes each way."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.up = self.down = 0
        self._lock = threading.Lock()
        super().__init__()

    def serve(self, connection: socket.socket, accepted_at: float) -> None:
        server = socket.create_connection(self.target)
        threading.Thread(target=self._pipe, args=(server, connection, "down"), daemon=True).start()
        self._pipe(connection, server, "up")

    def _pipe(self, source: socket.socket, sink: socket.socket, way: str) -> None:
        try:
            while chunk := source.recv(65536):
                with self._lock:  # (counted before it is passed on: counted when the client has its answer)
                    setattr(self, way, getattr(self, way) + len(chunk))
                sink.sendall(chunk)
        except OSError:
            pass
        finally:
            for sock in (source, sink):
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass


class InvocationBytes:
    """The bytes of the events the door gives the functions and of their answers (JSON, as Lambda carries them)."""

    def __init__(self) -> None:
        self.count = 0

    def wrap(self, make_handler: Any) -> Any:
        import json

        def made(*args: Any, **kwargs: Any) -> Any:
            handler = make_handler(*args, **kwargs)

            def counted(event: dict[str, Any], context: Any) -> Any:
                result = handler(event, context)
                self.count += len(json.dumps(event).encode()) + len(json.dumps(result).encode())
                return result

            return counted

        return made


@contextmanager
def alb_server(invocations: InvocationBytes | None = None) -> Iterator[tuple[CountingRelay, str, str]]:
    os.environ.setdefault("POWERTOOLS_LOG_LEVEL", "WARNING")
    os.environ.setdefault("POWERTOOLS_METRICS_DISABLED", "true")
    from local_runtime import server as local_server
    from mnsd.access.keys import StaticKeyStore
    from mnsd.ground.settings import Settings

    settings = Settings.from_env({})
    make_handler = local_server.make_handler
    if invocations is not None:
        local_server.make_handler = invocations.wrap(make_handler)
    try:
        server = local_server.LocalServer(settings, port=0, quiet=True, front_door="alb").start_background()
    finally:
        local_server.make_handler = make_handler
    host, port = server.httpd.server_address[:2]
    relay = CountingRelay((str(host), port))
    key = StaticKeyStore(settings.credentials).default
    try:
        yield relay, key.key_id, key.secret
    finally:
        relay.close()
        server.stop()


def measure(messages: int) -> dict[str, float]:
    from mns.account import Account
    from mns.queue import Message, QueueMeta

    from mnsd.request.listener import rule_for

    invocations = InvocationBytes()
    with alb_server(invocations) as (relay, key_id, secret):
        queue = Account(f"http://127.0.0.1:{relay.port}", key_id, secret).get_queue("cost-" + uuid.uuid4().hex[:8])
        queue.create(QueueMeta())
        queue.set_encoding(False)
        relay.up = relay.down = invocations.count = 0
        for _ in range(messages):
            body = base64.b64encode(os.urandom(768)).decode()  # 1 KB of incompressible text
            queue.send_message(Message(body))
            received = queue.receive_message(1)
            queue.delete_message(received.receipt_handle)
        requests = 3 * messages
        up, down, functions = relay.up, relay.down, invocations.count
    rules = [
        rule_for(method, f"/queues/{queue.queue_name}/messages")
        for method in ("POST", "GET", "DELETE")  # send, receive, delete
    ]
    evaluated = sum(rule.priority for rule in rules if rule) / len(rules)
    return {
        "requests": requests,
        "bytes_up": up / requests,
        "bytes_down": down / requests,
        "bytes_functions": functions / requests,
        "rules": evaluated,
    }


WIRE_BODIES = (64, 1024)  # the bench's two body sizes (`bench.bodies`)
WIRE_BATCHES = (2, 16)  # two sizes of each batch form
WIRE_ROUNDS = 10


SIDES = ("clients", "functions")
Form = tuple[str, bool]


class WireRun:
    """`rounds` requests of each form through the relay, their mean bytes on each side."""

    def __init__(self, queue: Any, relay: CountingRelay, invocations: InvocationBytes, rounds: int) -> None:
        self.queue, self.relay, self.invocations, self.rounds = queue, relay, invocations, rounds
        self.points: dict[str, dict[Form, dict[tuple[int, int], float]]] = {side: {} for side in SIDES}
        self.empty: dict[str, dict[Form, float]] = {side: {} for side in SIDES}

    def so_far(self) -> dict[str, int]:
        return {"clients": self.relay.up + self.relay.down, "functions": self.invocations.count}

    def counted(self, form: Form, at: tuple[int, int] | None, calls: list[Any]) -> list[Any]:
        """Each call made, what it returned; the mean bytes per call recorded at `at` (messages, body size), or as
        the form's empty answer."""
        before = self.so_far()
        results = [call() for call in calls]
        after = self.so_far()
        for side in SIDES:
            mean = (after[side] - before[side]) / len(calls)
            if at is None:
                self.empty[side][form] = mean
            else:
                self.points[side].setdefault(form, {})[at] = mean
        return results

    def lifecycles(self, size: int) -> None:
        """Send, receive and delete `size`-byte bodies one at a time, then in batches of each of WIRE_BATCHES."""
        from mns.queue import Message

        def body() -> Message:
            return Message(base64.b64encode(os.urandom(size))[:size].decode())

        queue, rounds = self.queue, self.rounds
        self.counted(("send", False), (1, size), [lambda: queue.send_message(body())] * rounds)
        got = self.counted(("receive", False), (1, size), [lambda: queue.receive_message(0)] * rounds)
        deletes = [functools.partial(queue.delete_message, m.receipt_handle) for m in got]
        self.counted(("delete", False), (1, size), deletes)
        for n in WIRE_BATCHES:
            sends = [functools.partial(queue.batch_send_message, [body() for _ in range(n)]) for _ in range(rounds)]
            self.counted(("send", True), (n, size), sends)
            batches = self.counted(
                ("receive", True), (n, size), [functools.partial(queue.batch_receive_message, n, 0)] * rounds
            )
            assert all(len(b) == n for b in batches), "a batch receive got fewer than it asked for"
            deletes = [functools.partial(queue.batch_delete_message, [m.receipt_handle for m in b]) for b in batches]
            self.counted(("delete", True), (n, size), deletes)

    def empty_receives(self) -> None:
        from mns.mns_exception import MNSExceptionBase

        def refused(call: Any) -> Any:
            def made() -> None:
                try:
                    call()
                except MNSExceptionBase:
                    return
                raise AssertionError("a receive of an empty queue got a message")

            return made

        queue = self.queue
        self.counted(("receive", False), None, [refused(lambda: queue.receive_message(0))] * self.rounds)
        self.counted(("receive", True), None, [refused(lambda: queue.batch_receive_message(16, 0))] * self.rounds)

    def models(self) -> dict[str, Wire]:
        from bench.wire import fit

        found = {}
        for side in SIDES:
            fitted = {form: fit(points) for form, points in self.points[side].items()}
            found[side] = Wire(
                {form: f[0] for form, f in fitted.items()},
                {form: f[1] for form, f in fitted.items()},
                {form: f[2] for form, f in fitted.items()},
                self.empty[side],
            )
        return found


def measure_wire(rounds: int = WIRE_ROUNDS) -> dict[str, Wire]:
    """The bytes each form of send, receive and delete carries (`bench.wire`): between the client and the load
    balancer (`clients`: the request and its answer on the wire, headers included) and between the load balancer and
    the function (`functions`: the event and the answer, JSON). Measured with the MNS Python SDK (the bodies
    unencoded, the bench's being text already; receives with a wait of 0, as the bench's) on kept-alive connections
    through the counting relay to the local server's ALB door, the mean of `rounds` requests of each form."""
    from mns.account import Account
    from mns.queue import QueueMeta

    invocations = InvocationBytes()
    with alb_server(invocations) as (relay, key_id, secret):
        queue = Account(f"http://127.0.0.1:{relay.port}", key_id, secret).get_queue("wire-" + uuid.uuid4().hex[:8])
        queue.create(QueueMeta())
        queue.set_encoding(False)
        run = WireRun(queue, relay, invocations, rounds)
        for size in WIRE_BODIES:
            run.lifecycles(size)
        run.empty_receives()
    return run.models()


def per_million(client_bytes: float, function_bytes: float, rules_per_request: float) -> dict[str, float]:
    """LCU-hours per million requests by each dimension (ALB bills the largest of them in an hour): processed bytes
    as ALB's ProcessedBytes counts them, the clients' and the functions' (`bench.front_doors`), and the clients' alone
    beside them."""
    seconds_of_rules = max(0.0, rules_per_request - FREE_RULES) * 1e6 / RULES_PER_LCU_SECOND
    return {
        "rules": seconds_of_rules / 3600,
        "bytes, client and function sides": (client_bytes + function_bytes) * 1e6 / 1e9 / LAMBDA_GB_PER_LCU_HOUR,
        "bytes, the client side alone": client_bytes * 1e6 / 1e9 / LAMBDA_GB_PER_LCU_HOUR,
        "new connections (none kept alive)": 1e6 / NEW_CONNECTIONS_PER_LCU_SECOND / 3600,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--messages", type=int, default=300)
    args = parser.parse_args()
    use_local_aws_defaults()
    measured = measure(args.messages)
    carried = measured["bytes_up"] + measured["bytes_down"]
    dimensions = per_million(carried, measured["bytes_functions"], measured["rules"])
    rows = [[name, f"{hours:.2f}", f"${hours * LCU_HOUR:.3f}"] for name, hours in dimensions.items()]
    kept_alive = max(dimensions["rules"], dimensions["bytes, client and function sides"])
    body = (
        f"{measured['requests']:.0f} requests (send, receive, delete of {args.messages} messages of 1 KB, one at a "
        f"time, the Python SDK on kept-alive connections): {measured['bytes_up']:.0f} bytes up and "
        f"{measured['bytes_down']:.0f} down a request on the wire, {measured['bytes_functions']:.0f} between the load "
        "balancer and the function (the event and the answer, JSON: ALB's ProcessedBytes counts \"traffic to and "
        'from clients and Lambda functions", https://docs.aws.amazon.com/elasticloadbalancing/latest/application/'
        f"load-balancer-cloudwatch-metrics.html), {measured['rules']:.1f} listener rules evaluated on average (the "
        f"first {FREE_RULES} are free).\n\n"
        + md_table(["LCU dimension, per million requests", "LCU-hours", f"at ${LCU_HOUR}/LCU-hour"], rows)
        + f"\n\nALB bills the largest dimension in each hour: **${kept_alive * LCU_HOUR:.3f} per million** requests"
        f" for these clients (${dimensions['bytes, the client side alone'] * LCU_HOUR:.3f} if only the client side "
        f"counted); ${max(dimensions.values()) * LCU_HOUR:.3f} for clients opening a connection a request; "
        f"plus ${ALB_HOUR * HOURS_PER_MONTH:.2f} a month (${ALB_HOUR}/ALB-hour). API Gateway's HTTP API: "
        f"${HTTP_API_PER_MILLION:.2f} per million. Break-even: "
        f"{ALB_HOUR * HOURS_PER_MONTH / (HTTP_API_PER_MILLION - kept_alive * LCU_HOUR):.1f} million requests a month."
    )
    print(body)
    write_result("front_door_cost", "The load balancer front door's cost per million requests", body)


if __name__ == "__main__":
    main()
