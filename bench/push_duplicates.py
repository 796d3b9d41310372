"""Retries that answer inside the 5 s limit: is any message pushed again after its 2xx?

Runs the retry state machine (moto, the definition the CDK app deploys) with the local push worker.
Every message's first attempt gets a 500; every later attempt is answered 204 after
`BENCH_DUP_DELAY` seconds (inside the 5 s limit). The exponential strategy retries after 1 s, so all
retries reach the push queue at once and wait for the worker. Counted: HTTP pushes, and messages
pushed again after one of their pushes had been answered 204 (at least once allows a retry after a
failure, never after a success).

Environment: BENCH_DUP_MESSAGES (30), BENCH_DUP_DELAY (3.0 s), BENCH_DUP_WORKERS (the local
worker's own concurrency when unset).
"""

from __future__ import annotations

import os
import threading
import time
from collections import Counter

from bench._common import md_table, use_local_aws_defaults, write_result
from bench._endpoint import PushEndpoint
from bench._servers import push_on_moto

N_MESSAGES = int(os.environ.get("BENCH_DUP_MESSAGES", "30"))
DELAY_SECONDS = float(os.environ.get("BENCH_DUP_DELAY", "3.0"))
WORKERS = os.environ.get("BENCH_DUP_WORKERS", "")
TIMEOUT_SECONDS = 600


class Receiver(PushEndpoint):
    """500 for a body's first push, then 204 after the delay; notes pushes that follow a 204."""

    def __init__(self) -> None:
        self.pushes: Counter[bytes] = Counter()
        self.answered_204: set[bytes] = set()
        self.after_success: Counter[bytes] = Counter()
        self.lock = threading.Lock()
        super().__init__()

    def answer(self, body: bytes) -> int:
        with self.lock:
            self.pushes[body] += 1
            first = self.pushes[body] == 1
            if body in self.answered_204:
                self.after_success[body] += 1
        if first:
            return 500
        time.sleep(DELAY_SECONDS)
        with self.lock:
            self.answered_204.add(body)
        return 204


def run() -> list[object]:

    from local_runtime import push as local_push
    from mnsd.push.signing import generate_signing_material
    from mnsd.wire import codec as xmlcodec
    from mnsd.wire import requests

    if WORKERS:
        local_push.WORKERS = int(WORKERS)
    key, certificate = generate_signing_material()
    account, ns = "1000000000000001", 'xmlns="http://mns.aliyuncs.com/doc/v1"'
    receiver = Receiver()
    with push_on_moto(key, certificate, account) as stack:
        services, arn = stack.services, stack.state_machine_arn
        services.topics.create_topic(account, "t", None)
        subscription = (
            f"<Subscription {ns}><Endpoint>{receiver.url('hook')}</Endpoint>"
            "<NotifyStrategy>EXPONENTIAL_DECAY_RETRY</NotifyStrategy><NotifyContentFormat>SIMPLIFIED"
            "</NotifyContentFormat></Subscription>"
        )
        services.topics.subscribe(account, "t", "s", requests.subscription_input(xmlcodec.parse(subscription.encode())))
        started = time.monotonic()
        for i in range(N_MESSAGES):
            xml = f"<Message {ns}><MessageBody>m{i}</MessageBody></Message>"
            services.fanout().fan_out(
                services.topics.publish(account, "t", requests.publish_input(xmlcodec.parse(xml.encode())))
            )
        sfn = stack.clients("stepfunctions")
        deadline = time.monotonic() + TIMEOUT_SECONDS
        while time.monotonic() < deadline:
            executions = sfn.list_executions(stateMachineArn=arn)["executions"]
            if len(executions) == N_MESSAGES and all(e["status"] != "RUNNING" for e in executions):
                break
            time.sleep(0.2)
        elapsed = time.monotonic() - started
        time.sleep(DELAY_SECONDS + 2)  # a late duplicate would arrive by now
    receiver.server.shutdown()
    delivered = len(receiver.answered_204)
    return [
        N_MESSAGES,
        WORKERS or "default",
        sum(receiver.pushes.values()),
        delivered,
        len(receiver.after_success),
        sum(receiver.after_success.values()),
        f"{elapsed:.0f}",
    ]


def main() -> None:
    use_local_aws_defaults()
    row = run()
    print(row, flush=True)
    table = md_table(
        ["messages", "worker threads", "HTTP pushes", "messages delivered", "messages pushed again after a 204",
         "pushes after a 204", "seconds to the last execution's end"],
        [row],
    )  # fmt: skip
    print(table)
    body = f"""
{table}

First attempt 500, every retry answered 204 after {DELAY_SECONDS:.1f} s (inside the 5 s limit), strategy
EXPONENTIAL_DECAY_RETRY (first retry after 1 s). The state machine is the deployed definition,
executed by moto; the push worker is the local runtime's (`local_runtime.push.LocalPushWorker`).
"""
    write_result("push_duplicates", "Push: retries answered 204 are never pushed again", body)


if __name__ == "__main__":
    main()
