"""The Mns-open OpenAPI beside the XML API on `python -m local_runtime` (SQLite in memory): the latency of one read of a
queue's attributes through each client (the MNS SDK's XML; the Tea SDK signing ACS3 and v1; the core SDK with a form
body), and of a whole Terraform-shaped queue lifecycle through the OpenAPI.

    .venv/bin/python -m bench.openapi_calls [--port 18500] [--calls 200]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
import urllib.request
import uuid
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlencode

from alibabacloud_mns_open20220119 import models
from alibabacloud_mns_open20220119.client import Client as MnsOpen
from alibabacloud_tea_openapi.utils_models import Config
from aliyunsdkcore.client import AcsClient
from aliyunsdkmns_open.request.v20220119.GetQueueAttributesRequest import GetQueueAttributesRequest
from mns.account import Account
from mns.queue import QueueMeta

from tests.support.local_server import free_port, start_server, stop_server
from tests.support.signers import openapi_v1_query

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
        form = {**params, "RegionId": "cn-hangzhou"}
        query = urlencode(openapi_v1_query((KEY, SECRET), action, form))
        request = urllib.request.Request(f"{endpoint}/?{query}", data=urlencode(form).encode(), method="POST")
        request.add_header("Content-Type", "application/x-www-form-urlencoded")
        with urllib.request.urlopen(request, timeout=30) as answer:  # noqa: S310
            assert json.loads(answer.read())["Success"] is True


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
        host = endpoint.split("://", 1)[1]
        config = dict(
            access_key_id=KEY, access_key_secret=SECRET, endpoint=host, protocol="http", region_id="cn-hangzhou"
        )
        acs3, v1 = MnsOpen(Config(**config)), MnsOpen(Config(**config, signature_algorithm="v2"))
        core = AcsClient(KEY, SECRET, "cn-hangzhou", auto_retry=False)

        def core_read() -> object:
            request = GetQueueAttributesRequest()
            request.set_endpoint(host)
            request.set_protocol_type("http")
            request.add_body_params("QueueName", "bench")
            return core.do_action_with_exception(request)

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
