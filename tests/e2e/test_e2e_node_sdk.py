"""The Node SDK (`@alicloud/mns`, `tests/node/sdk_calls.js`) against the local server: every operation it implements
(queues, messages and their batches, topics, publishing) and the errors a program reads from it, signed V2 by the
SDK itself, end to end through the request pipeline."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.support.servers import ACCOUNT_A

SDK_CALLS = Path(__file__).parent.parent / "node" / "sdk_calls.js"
CASES = [
    "createQueue",
    "setQueueAttributes",
    "listQueue",
    "sendMessage",
    "peekMessage",
    "receiveMessage",
    "changeMessageVisibility",
    "deleteMessage",
    "batchSendMessage",
    "batchPeekMessage",
    "batchReceiveMessage",
    "batchDeleteMessage",
    "receiveMessage.empty",
    "wrongSecret",
    "deleteQueue",
    "createTopic",
    "setTopicAttributes",
    "listTopic",
    "publishMessage",
]


def test_every_operation_of_the_node_sdk_works_unchanged(endpoint, qname):
    proc = subprocess.run(
        ["node", str(SDK_CALLS), endpoint, *ACCOUNT_A, qname], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    results = dict(line.split("\t", 1) for line in proc.stdout.splitlines())
    assert list(results) == CASES
    assert {case: result for case, result in results.items() if result != "OK"} == {}
