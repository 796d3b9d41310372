"""The Mns-open OpenAPI beside the XML API on `python -m local_runtime` (SQLite in memory): the latency of one read of a
queue's attributes through each client (the MNS SDK's XML; the Tea SDK signing ACS3 and v1; the core SDK with a form
body), and of a whole Terraform-shaped queue lifecycle through the OpenAPI.

    .venv/bin/python -m bench.openapi_calls [--port 18500] [--calls 200]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests" / "e2e")]

from alibabacloud_mns_open20220119 import models  # noqa: E402
from aliyunsdkmns_open.request.v20220119.GetQueueAttributesRequest import GetQueueAttributesRequest  # noqa: E402
from local_server import free_port, start_server, stop_server  # noqa: E402
from mns.account import Account  # noqa: E402
from mns.queue import QueueMeta  # noqa: E402
from mns_open_clients import CoreClient, tea_client, v1_call  # noqa: E402

KEY, SECRET = "BENCHKEY", "BENCHSECRET"


def timed(call: Callable[[], object], calls: int) -> tuple[float, float]:
    """(p50, p99) in ms of `calls` calls, after 5 to warm up."""
    for _ in range(5):
        call()
    spent = []
    for _ in range(calls):
        start = time.perf_counter()
        call()
        spent.append((time.perf_counter() - start) * 1000)
    spent.sort()
    return statistics.median(spent), spent[min(len(spent) - 1, int(len(spent) * 0.99))]


def lifecycle(endpoint: str) -> None:
    """CreateQueue, GetQueueAttributes twice, SetQueueAttributes, TagResources, UntagResources, DeleteQueue."""
    name = f"tf-{uuid.uuid4().hex[:10]}"
    for action, params in (
        ("CreateQueue", {"QueueName": name, "VisibilityTimeout": "40", "Tag.1.Key": "a", "Tag.1.Value": "b"}),
        ("GetQueueAttributes", {"QueueName": name}),
        ("GetQueueAttributes", {"QueueName": name}),
        ("SetQueueAttributes", {"QueueName": name, "VisibilityTimeout": "60"}),
        ("TagResources", {"ResourceType": "queue", "ResourceId.1": name, "Tag.1.Key": "c", "Tag.1.Value": "d"}),
        ("UntagResources", {"ResourceType": "queue", "ResourceId.1": name, "TagKey.1": "a"}),
        ("DeleteQueue", {"QueueName": name}),
    ):
        status, body = v1_call(endpoint, KEY, SECRET, action, {**params, "RegionId": "cn-hangzhou"})
        assert status == 200, body


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--calls", type=int, default=200)
    args = parser.parse_args()
    port = args.port or free_port()
    env = {
        **os.environ,
        "MNS_PORT": str(port),
        "MNS_DATA_DIR": ":memory:",
        "MNS_CREDENTIALS": f"1000000000000001:{KEY}:{SECRET}",
        "POWERTOOLS_LOG_LEVEL": "WARNING",
    }
    log = Path(tempfile.mkdtemp()) / "server.log"
    server = start_server(env, port, log)
    try:
        endpoint = f"http://127.0.0.1:{port}"
        Account(endpoint, KEY, SECRET).get_queue("bench").create(QueueMeta())
        acs3, v1 = tea_client(endpoint, KEY, SECRET), tea_client(endpoint, KEY, SECRET, v1=True)
        core = CoreClient(endpoint, KEY, SECRET)

        def core_read() -> object:
            request = GetQueueAttributesRequest()
            request.set_QueueName("bench")
            return core.send(request)

        rows = [
            ("MNS SDK 1.3.0, XML, V2", lambda: Account(endpoint, KEY, SECRET).get_queue("bench").get_attributes()),
            (
                "Mns-open Tea SDK, ACS3",
                lambda: acs3.get_queue_attributes(models.GetQueueAttributesRequest(queue_name="bench")),
            ),
            (
                "Mns-open Tea SDK, v1",
                lambda: v1.get_queue_attributes(models.GetQueueAttributesRequest(queue_name="bench")),
            ),
            ("core SDK, v1, form body", core_read),
        ]
        print("| client | GetQueueAttributes p50 (ms) | p99 (ms) |\n|---|---|---|")
        for label, call in rows:
            p50, p99 = timed(call, args.calls)
            print(f"| {label} | {p50:.2f} | {p99:.2f} |")
        p50, p99 = timed(lambda: lifecycle(endpoint), max(10, args.calls // 10))
        print(
            f"\nTerraform-shaped queue lifecycle (7 OpenAPI calls, v1, form bodies): p50 {p50:.1f} ms, p99 {p99:.1f} ms"
        )
    finally:
        stop_server(server)


if __name__ == "__main__":
    main()
