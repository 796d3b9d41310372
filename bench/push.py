"""Push delivery: publish and delivery latency on the local server, and Step Functions transitions per delivery.

Part 1 publishes through the official SDK to LocalServer (in this process) with one queue and one
HTTP subscription, and times publish -> 201, publish -> queue receive, publish -> HTTP endpoint hit.

Part 2 runs the retry state machine (the definition the CDK app deploys) in moto for each scenario,
and counts billed state transitions from the execution history: every state entered, plus every
extra attempt of a retried Task. Long schedules run with moto's waits recorded instead of slept.
The cost columns multiply those counts by list prices given below (inputs, not measurements).
"""

from __future__ import annotations

import os
import threading
import time

from bench._common import md_table, pct, use_local_aws_defaults, write_result
from bench._endpoint import PushEndpoint
from bench._servers import push_on_moto, start_ours

# us-east-1 list prices (USD) used for the cost columns.
PRICE_TRANSITION = 25.0 / 1_000_000  # Step Functions standard workflow, per state transition
PRICE_SQS_REQUEST = 0.40 / 1_000_000  # per SQS request (64 KB chunk)
PRICE_LAMBDA_REQUEST = 0.20 / 1_000_000
PRICE_LAMBDA_GB_SECOND = 0.0000166667
WORKER_GB_SECONDS = 0.256 * 0.1  # assumption: a retry takes 100 ms in a 256 MB function
PRICE_SNS_HTTP = 0.60 / 1_000_000  # Amazon SNS, per HTTP/S notification delivered

N_MESSAGES = int(os.environ.get("BENCH_PUSH_MESSAGES", "200"))


class Receiver(PushEndpoint):
    """An HTTP endpoint recording when each body arrived (after answering 500 to the first `fail_first` hits)."""

    def __init__(self, fail_first: int = 0) -> None:
        self.arrivals: dict[bytes, float] = {}
        self.hits = 0
        self.fail_first = fail_first
        super().__init__()

    def answer(self, body: bytes) -> int:
        self.hits += 1
        if self.hits <= self.fail_first:
            return 500
        self.arrivals.setdefault(body, time.perf_counter())
        return 204


def latency() -> str:
    from mns.mns_common import TopicHelper
    from mns.queue import QueueMeta
    from mns.subscription import SubscriptionMeta
    from mns.topic import TopicMessage, TopicMeta

    server, account = start_ours()
    receiver = Receiver()
    queue = account.get_queue("bench-push")
    queue.create(QueueMeta())
    queue.set_encoding(False)
    topic = account.get_topic("bench-push")
    topic.create(TopicMeta())
    key_account = server.settings.credentials.split(":")[0]
    endpoint = TopicHelper.generate_queue_endpoint(server.settings.region, key_account, "bench-push")
    topic.get_subscription("queue").subscribe(SubscriptionMeta(endpoint, notify_content_format="SIMPLIFIED"))
    topic.get_subscription("http").subscribe(
        SubscriptionMeta(receiver.url("bench"), notify_content_format="SIMPLIFIED")
    )

    queue_arrivals: dict[str, float] = {}
    stop = threading.Event()

    def consume() -> None:
        from mns.account import Account

        _, key_id, secret = server.settings.credentials.split(",")[0].split(":")
        consumer = Account(server.endpoint, key_id, secret)
        q = consumer.get_queue("bench-push")
        q.set_encoding(False)
        while not stop.is_set():
            try:
                message = q.receive_message(1)
            except Exception:
                continue
            queue_arrivals.setdefault(message.message_body, time.perf_counter())
            q.delete_message(message.receipt_handle)

    thread = threading.Thread(target=consume, daemon=True)
    thread.start()
    published: dict[str, float] = {}
    publish_ms = []
    for i in range(N_MESSAGES):
        body = f"message-{i:05d}"
        started = time.perf_counter()
        topic.publish_message(TopicMessage(body))
        publish_ms.append((time.perf_counter() - started) * 1000)
        published[body] = started
        time.sleep(0.02)
    deadline = time.monotonic() + 30
    while (len(queue_arrivals) < N_MESSAGES or len(receiver.arrivals) < N_MESSAGES) and time.monotonic() < deadline:
        time.sleep(0.1)
    stop.set()
    to_queue = [(queue_arrivals[b] - t) * 1000 for b, t in published.items() if b in queue_arrivals]
    to_http = [
        (receiver.arrivals[b.encode()] - t) * 1000 for b, t in published.items() if b.encode() in receiver.arrivals
    ]
    server.stop()
    rows = [
        ["publish (SDK call, 201)", len(publish_ms), f"{pct(publish_ms, 50):.1f}", f"{pct(publish_ms, 99):.1f}"],
        ["publish -> queue endpoint received", len(to_queue), f"{pct(to_queue, 50):.1f}", f"{pct(to_queue, 99):.1f}"],
        ["publish -> HTTP endpoint hit", len(to_http), f"{pct(to_http, 50):.1f}", f"{pct(to_http, 99):.1f}"],
    ]
    return md_table(["what", "messages", "p50 ms", "p99 ms"], rows)


def transitions_table() -> str:
    from moto.stepfunctions.parser.asl.component.common.retry import retrier_decl
    from moto.stepfunctions.parser.asl.component.state.wait.wait_function.wait_function import WaitFunction

    from mnsd.model.inputs import PublishInput
    from mnsd.model.topics import SubscriptionInput
    from mnsd.push.signing import generate_signing_material

    class InstantTime:  # moto's Retry intervals and Wait states, recorded instead of slept
        @staticmethod
        def sleep(seconds: float) -> None:
            pass

    retrier_decl.time = InstantTime  # type: ignore[assignment]
    WaitFunction._wait_interval = lambda self, env, wait_seconds: None  # type: ignore[method-assign]

    scenarios = [
        ("success on first try", "BACKOFF_RETRY", 0),
        ("BACKOFF: success after 1 retry", "BACKOFF_RETRY", 1),
        ("BACKOFF: success after 3 retries", "BACKOFF_RETRY", 3),
        ("BACKOFF: all 4 attempts fail (drop)", "BACKOFF_RETRY", 10**9),
        ("EXPONENTIAL: success after 1 retry", "EXPONENTIAL_DECAY_RETRY", 1),
        ("EXPONENTIAL: success after 10 retries", "EXPONENTIAL_DECAY_RETRY", 10),
        ("EXPONENTIAL: all 177 attempts fail (drop)", "EXPONENTIAL_DECAY_RETRY", 10**9),
    ]
    rows = []
    key, certificate = generate_signing_material()
    for label, strategy, failures in scenarios:
        receiver = Receiver(fail_first=failures)
        with push_on_moto(key, certificate) as stack:
            services, arn = stack.services, stack.state_machine_arn
            services.topics.create_topic("1000000000000001", "t", None)
            services.topics.subscribe(
                "1000000000000001",
                "t",
                "s",
                SubscriptionInput(endpoint=receiver.url("bench"), notify_strategy=strategy),
            )
            message = services.topics.publish(
                "1000000000000001",
                "t",
                PublishInput(body="b"),
            )
            services.fanout().fan_out(message)
            sfn = stack.clients("stepfunctions")
            executions = sfn.list_executions(stateMachineArn=arn)["executions"]
            transitions = 0
            for execution in executions:
                while sfn.describe_execution(executionArn=execution["executionArn"])["status"] == "RUNNING":
                    time.sleep(0.05)
                events = sfn.get_execution_history(executionArn=execution["executionArn"], maxResults=1000)["events"]
                entered = sum(e["type"].endswith("StateEntered") for e in events)
                task_entries = sum(e["type"] == "TaskStateEntered" for e in events)
                attempts = sum(e["type"] == "TaskScheduled" for e in events)
                transitions += entered + (attempts - task_entries)
        receiver.server.shutdown()
        retries = receiver.hits - 1
        sfn_cost = transitions * PRICE_TRANSITION * 1_000_000
        # Per retry: SendMessage by the state machine, ~2 SQS requests by the event source, one worker invocation.
        retry_cost = retries * (
            3 * PRICE_SQS_REQUEST + PRICE_LAMBDA_REQUEST + WORKER_GB_SECONDS * PRICE_LAMBDA_GB_SECOND
        )
        rows.append(
            [label, receiver.hits, len(executions), transitions, f"{sfn_cost:,.2f}", f"{sfn_cost + retry_cost * 1e6:,.2f}",
             f"{PRICE_SNS_HTTP * 1e6:.2f}"]
        )  # fmt: skip
        print(label, rows[-1], flush=True)
    return md_table(
        ["scenario", "HTTP attempts", "executions", "billed transitions", "Step Functions $/M deliveries",
         "+ SQS and worker Lambda $/M", "SNS HTTP $/M deliveries"],
        rows,
    )  # fmt: skip


def main() -> None:
    use_local_aws_defaults()
    print("latency ...", flush=True)
    latency_table = latency()
    print(latency_table, flush=True)
    print("transitions ...", flush=True)
    table = transitions_table()
    print(table)
    body = f"""
## Latency (local server, one queue and one HTTP subscription, {N_MESSAGES} messages published 20 ms apart)

{latency_table}

The queue endpoint is read by one SDK consumer long-polling in a thread; the HTTP endpoint is a
threaded server in the same process. Locally the fan-out runs on a thread pool right after the
publish; on AWS it starts from the topic message table's stream, which adds the stream's own delay.

## Step Functions per delivery

{table}

A first attempt that succeeds starts no execution: 0 transitions. Cost columns are the measured
transitions times the list prices in `bench/push.py` (Step Functions ${PRICE_TRANSITION * 1e6:.0f} per million
transitions, SQS ${PRICE_SQS_REQUEST * 1e6:.2f}/M requests, Lambda ${PRICE_LAMBDA_REQUEST * 1e6:.2f}/M requests plus
an assumed 100 ms at 256 MB per retry); SNS's ${PRICE_SNS_HTTP * 1e6:.2f} per million HTTP deliveries is its list price, for
comparison. The first attempt itself (fan-out Lambda time, the topic message write) is not in these
columns: it is the same for every scenario.
"""
    write_result("push", "Push delivery: latency and Step Functions transitions", body)


if __name__ == "__main__":
    main()
