"""What the load balancer front door (`-c frontDoor=alb`, docs/front-door.md) costs per million requests: the bytes
a request and its answer carry, measured on the wire of the local server with the ALB door (the Python SDK sending,
receiving and deleting 1 KB incompressible messages one at a time, through a counting relay), and the rules each
request goes through (`mnsd.request.listener`), priced at ALB's LCU rates; beside API Gateway's HTTP API price.

    .venv/bin/python -m bench.front_door_cost [--messages 300]
"""

from __future__ import annotations

import argparse
import base64
import os
import socket
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

from bench._common import md_table, use_local_aws_defaults, write_result
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
                sink.sendall(chunk)
                with self._lock:
                    setattr(self, way, getattr(self, way) + len(chunk))
        except OSError:
            pass
        finally:
            for sock in (source, sink):
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass


@contextmanager
def alb_server() -> Iterator[tuple[CountingRelay, str, str]]:
    os.environ.setdefault("POWERTOOLS_LOG_LEVEL", "WARNING")
    os.environ.setdefault("POWERTOOLS_METRICS_DISABLED", "true")
    from local_runtime.server import LocalServer
    from mnsd.access.keys import StaticKeyStore
    from mnsd.ground.settings import Settings

    settings = Settings.from_env({})
    server = LocalServer(settings, port=0, quiet=True, front_door="alb").start_background()
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

    with alb_server() as (relay, key_id, secret):
        queue = Account(f"http://127.0.0.1:{relay.port}", key_id, secret).get_queue("cost-" + uuid.uuid4().hex[:8])
        queue.create(QueueMeta())
        queue.set_encoding(False)
        relay.up = relay.down = 0
        for _ in range(messages):
            body = base64.b64encode(os.urandom(768)).decode()  # 1 KB of incompressible text
            queue.send_message(Message(body))
            received = queue.receive_message(1)
            queue.delete_message(received.receipt_handle)
        requests = 3 * messages
        up, down = relay.up, relay.down
    rules = [
        rule_for(method, f"/queues/{queue.queue_name}/messages")
        for method in ("POST", "GET", "DELETE")  # send, receive, delete
    ]
    evaluated = sum(rule.priority for rule in rules if rule) / len(rules)
    return {"requests": requests, "bytes_up": up / requests, "bytes_down": down / requests, "rules": evaluated}


def per_million(bytes_per_request: float, rules_per_request: float) -> dict[str, float]:
    """LCU-hours per million requests by each dimension (ALB bills the largest of them in an hour)."""
    seconds_of_rules = max(0.0, rules_per_request - FREE_RULES) * 1e6 / RULES_PER_LCU_SECOND
    return {
        "rules": seconds_of_rules / 3600,
        "bytes": bytes_per_request * 1e6 / 1e9 / LAMBDA_GB_PER_LCU_HOUR,
        "new connections (none kept alive)": 1e6 / NEW_CONNECTIONS_PER_LCU_SECOND / 3600,
        "rules at 40 (worst case)": (40 - FREE_RULES) * 1e6 / RULES_PER_LCU_SECOND / 3600,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--messages", type=int, default=300)
    args = parser.parse_args()
    use_local_aws_defaults()
    measured = measure(args.messages)
    carried = measured["bytes_up"] + measured["bytes_down"]
    dimensions = per_million(carried, measured["rules"])
    rows = [[name, f"{hours:.2f}", f"${hours * LCU_HOUR:.3f}"] for name, hours in dimensions.items()]
    kept_alive = max(dimensions["rules"], dimensions["bytes"])
    body = (
        f"{measured['requests']:.0f} requests (send, receive, delete of {args.messages} messages of 1 KB, one at a "
        f"time, the Python SDK on kept-alive connections): {measured['bytes_up']:.0f} bytes up and "
        f"{measured['bytes_down']:.0f} down a request on the wire, {measured['rules']:.1f} listener rules evaluated "
        f"on average (the first {FREE_RULES} are free).\n\n"
        + md_table(["LCU dimension, per million requests", "LCU-hours", f"at ${LCU_HOUR}/LCU-hour"], rows)
        + f"\n\nALB bills the largest dimension in each hour: **${kept_alive * LCU_HOUR:.3f} per million** requests"
        f" for these clients, at most ${max(dimensions.values()) * LCU_HOUR:.3f} without keep-alive or at 40 rules; "
        f"plus ${ALB_HOUR * HOURS_PER_MONTH:.2f} a month (${ALB_HOUR}/ALB-hour). API Gateway's HTTP API: "
        f"${HTTP_API_PER_MILLION:.2f} per million. Break-even: "
        f"{ALB_HOUR * HOURS_PER_MONTH / (HTTP_API_PER_MILLION - kept_alive * LCU_HOUR):.1f} million requests a month."
    )
    print(body)
    write_result("front_door_cost", "The load balancer front door's cost per million requests", body)


if __name__ == "__main__":
    main()
