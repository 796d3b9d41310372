"""What an idle consumer costs on AWS per month, per receive-route configuration (memory, architecture).

A consumer that long-polls an empty queue keeps one `get_messages` execution waiting all the time: Lambda
bills that wait by the GB-second. This script measures, against the local server (the same handlers):

- the duration of one idle long poll (`ReceiveMessage` with `waitseconds=30` on an empty queue): what Lambda
  bills for it, since the function does nothing but wait and re-query until the poll ends;
- the CPU time spent during that poll (server and moto, in this process: an upper bound of the function's own);
- the CPU time of importing the route handler in a fresh interpreter (what a cold start runs),

then prices a month of back-to-back idle polls per configuration at list prices, beside SQS's long polling.
Lambda gives a function CPU in proportion to its memory (one vCPU at 1,769 MB): the CPU-bound times are
scaled to each size, a derivation, not a measurement on Lambda.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

from bench._common import ROOT, md_table, use_local_aws_defaults, write_result

# List prices, us-east-1, as published on the AWS pricing pages (checked 2026-11).
LAMBDA_GB_SECOND = {"x86_64": 0.0000166667, "arm64": 0.0000133334}
LAMBDA_REQUEST = 0.20 / 1e6
HTTP_API_REQUEST = 1.00 / 1e6  # first 300 M requests a month
DYNAMODB_READ_UNIT = 0.125 / 1e6  # on demand
SQS_REQUEST = 0.40 / 1e6  # standard queue, beyond the free tier
SQS_MAX_WAIT_SECONDS = 20
MONTH_SECONDS = 30 * 86400
VCPU_MEMORY_MB = 1769
MEMORY_SIZES = (128, 256, 512)
ARCHITECTURES = ("x86_64", "arm64")
# Idle poll reads: the queue's attributes (one consistent GetItem, 1 unit) once, then one eventually
# consistent Query of the lease range (0.5 unit, nothing found) per poll interval.
QUEUE_READ_UNITS = 1.0
QUERY_READ_UNITS = 0.5


def measure_idle_poll() -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one ReceiveMessage waiting 30 s on an empty queue, served locally."""
    from mns.mns_exception import MNSExceptionBase
    from mns.queue import QueueMeta

    from bench._servers import start_ours

    server, account = start_ours()
    try:
        queue = account.get_queue("idle-consumer")
        queue.create(QueueMeta())
        cpu, start = time.process_time(), time.monotonic()
        try:
            queue.receive_message(wait_seconds=30)
            raise AssertionError("the queue was not empty")
        except MNSExceptionBase as error:
            assert error.type == "MessageNotExist", error.type
        return time.monotonic() - start, time.process_time() - cpu
    finally:
        server.stop()


STUB_SERVER = """
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

class Empty(BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers["Content-Length"]))
        body = b'{"Items": [], "Count": 0, "ScannedCount": 0}'
        self.send_response(200)
        self.send_header("Content-Type", "application/x-amz-json-1.0")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass

server = ThreadingHTTPServer(("127.0.0.1", 0), Empty)
print(server.server_address[1], flush=True)
server.serve_forever()
"""


def measure_query_cpu(calls: int = 300) -> float:
    """CPU seconds one empty lease-range Query costs the caller (boto3 with the functions' client
    configuration: sign, send, parse), against a stub DynamoDB in another process so that only the
    caller's CPU is counted."""
    import boto3

    from mnsd.services import client_config

    stub = subprocess.Popen([sys.executable, "-c", STUB_SERVER], stdout=subprocess.PIPE, text=True)
    try:
        assert stub.stdout is not None
        port = int(stub.stdout.readline())
        client = boto3.client("dynamodb", endpoint_url=f"http://127.0.0.1:{port}", config=client_config())
        query = {
            "TableName": "messages",
            "KeyConditionExpression": "pk = :pk AND sk BETWEEN :low AND :high",
            "ExpressionAttributeValues": {":pk": {"S": "q"}, ":low": {"S": "L0"}, ":high": {"S": "L9"}},
            "Limit": 32,
        }
        client.query(**query)  # connection and first-call setup, as a warm function has them
        cpu = time.process_time()
        for _ in range(calls):
            client.query(**query)
        return (time.process_time() - cpu) / calls
    finally:
        stub.kill()
        stub.wait()


def measure_import_cpu(runs: int = 3) -> float:
    """Median CPU seconds of `import functions.get_messages` in a fresh interpreter."""
    code = "import time; t = time.process_time(); import functions.get_messages; print(time.process_time() - t)"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(["layers/mnsd/python", "."])}  # this checkout's code
    samples = sorted(
        float(
            subprocess.run(
                [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True
            ).stdout
        )
        for _ in range(runs)
    )
    return samples[len(samples) // 2]


def monthly(poll_seconds: float, memory_mb: int, architecture: str, poll_interval_s: float) -> dict[str, float]:
    polls = MONTH_SECONDS / poll_seconds
    reads = polls * (QUEUE_READ_UNITS + QUERY_READ_UNITS * (poll_seconds // poll_interval_s + 1))
    return {
        "lambda": MONTH_SECONDS * memory_mb / 1024 * LAMBDA_GB_SECOND[architecture] + polls * LAMBDA_REQUEST,
        "api": polls * HTTP_API_REQUEST,
        "dynamodb": reads * DYNAMODB_READ_UNIT,
    }


def main() -> None:
    use_local_aws_defaults()
    from mnsd.ground.settings import Settings

    poll_interval_s = Settings().poll_interval_ms / 1000
    wall, cpu = measure_idle_poll()
    import_cpu = measure_import_cpu()
    query_cpu = measure_query_cpu()
    queries = wall // poll_interval_s + 1
    poll_cpu = queries * query_cpu
    sqs = MONTH_SECONDS / SQS_MAX_WAIT_SECONDS * SQS_REQUEST
    rows = []
    for architecture in ARCHITECTURES:
        for memory in MEMORY_SIZES:
            cost = monthly(wall, memory, architecture, poll_interval_s)
            share = min(1.0, memory / VCPU_MEMORY_MB)
            rows.append(
                [
                    architecture,
                    memory,
                    f"${cost['lambda']:.2f}",
                    f"${cost['api'] + cost['dynamodb']:.2f}",
                    f"**${sum(cost.values()):.2f}**",
                    f"{poll_cpu / share * 1000:.0f} ms ({query_cpu / share * 1000:.1f} ms per Query)",
                    f"{import_cpu / share:.2f} s",
                ]
            )
    table = md_table(
        [
            "architecture",
            "memory (MB)",
            "Lambda (duration + requests)",
            "HTTP API + DynamoDB reads",
            "total per idle consumer-month",
            "the function's CPU in one idle poll at this size (derived)",
            "handler import at this size (derived)",
        ],
        rows,
    )
    body = f"""
Measured: one idle long poll (ReceiveMessage, waitseconds=30, empty queue) took **{wall:.2f} s** (the
28 s cap of `MNS_MAX_POLL_SECONDS` plus the call), i.e. what Lambda bills for it (locally it used
{cpu * 1000:.0f} ms of CPU, mostly moto's). On AWS the function's own work in that poll is {queries:.0f} empty
Queries of the lease range; one costs the caller **{query_cpu * 1000:.2f} ms** of CPU (boto3 with the functions'
client configuration against a stub DynamoDB in another process, mean of 300), so
{poll_cpu * 1000:.0f} ms per idle poll. Importing the route handler took {import_cpu * 1000:.0f} ms of CPU (median
of 3 fresh interpreters).

A consumer polling an empty queue back to back for a month ({MONTH_SECONDS / wall:,.0f} polls) costs, at list
prices (us-east-1: Lambda ${LAMBDA_GB_SECOND["x86_64"]:.10f}/GB-s x86_64, ${LAMBDA_GB_SECOND["arm64"]:.10f}/GB-s arm64,
$0.20 per million requests; HTTP API $1.00 per million; DynamoDB on demand $0.125 per million read units,
{QUEUE_READ_UNITS:g} + {QUERY_READ_UNITS:g} per {poll_interval_s:g} s poll interval):

{table}

The same consumer on SQS (20 s long polls, $0.40 per million requests): **${sqs:.3f}** per month.

The derived columns divide the measured CPU time by the share of a vCPU Lambda gives each size (memory /
{VCPU_MEMORY_MB} MB): they show what runs slower when memory shrinks, not Lambda's own timings. The idle wait is
billed the same whatever the CPU; the cold start (handler import) is what a smaller size stretches.
"""
    print(body)
    write_result("lambda_cost", "Cost of an idle long poll on AWS, per receive-route configuration", body)


if __name__ == "__main__":
    main()
