"""An MNS estate for the migration tests, made on a source with the clients users run (the core SDK's Mns-open calls,
the Python SDK's batch sends), and the readings the tests compare it with (the same clients, never the tool's)."""

from __future__ import annotations

import base64
import io
import json
import os
import random
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from mns.account import Account
from mns.mns_exception import MNSServerException
from mns.queue import Message

from migrate.cli import main
from tests.e2e.mns_open_clients import CoreClient

PUSH_KINDS = (
    ("queue", None),
    ("http", "http://127.0.0.1:9/notify"),
    ("email", "ops@example.com"),
    ("alisms", "13800000000"),
)
LOGGING_EVERY = 2  # one queue in this many logs its operations
TIMES = (
    "CreateTime",
    "LastModifyTime",
    "ActiveMessages",
    "InactiveMessages",
    "DelayMessages",
    "QueueUrl",
    "QueueInternalUrl",
)
TOPIC_TIMES = ("CreateTime", "LastModifyTime", "MessageCount", "TopicUrl", "TopicInnerUrl")


@dataclass
class Sent:
    queue: str
    body: str
    priority: int | None  # None in a FIFO queue (it takes none)
    group: str
    due_ms: int  # when it becomes receivable (sent with a delay)


@dataclass
class Estate:
    prefix: str
    queues: list[str]
    fifo: set[str]
    topics: list[str]
    sent: list[Sent] = field(default_factory=list)


def run(argv: list[str], env: dict[str, str], tmp: Path) -> tuple[int, str, str]:
    """The tool in this process: its exit status, stdout and stderr."""
    out, err = io.StringIO(), io.StringIO()
    code = main([*argv, "--aliyun-config", str(tmp / "no-aliyun-config.json")], environ=env, out=out, err=err)
    assert_no_secret(env, out.getvalue() + err.getvalue())
    return code, out.getvalue(), err.getvalue()


def start(argv: list[str], env: dict[str, str], tmp: Path) -> subprocess.Popen[str]:
    """The tool as users run it, `python -m migrate`, in a process of its own (to be stopped with Ctrl-C)."""
    command = [sys.executable, "-m", "migrate", *argv, "--aliyun-config", str(tmp / "no-aliyun-config.json")]
    return subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def interrupt(process: subprocess.Popen[str], env: dict[str, str]) -> tuple[int, str, str]:
    """Ctrl-C to a tool started with `start`: its exit status, stdout and stderr."""
    process.send_signal(signal.SIGINT)
    try:
        out, err = process.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        process.kill()
        raise
    assert_no_secret(env, out + err)
    return process.returncode, out, err


def assert_no_secret(env: dict[str, str], printed: str) -> None:
    secrets = [v for k, v in env.items() if k.endswith(("ACCESS_KEY_SECRET", "SECURITY_TOKEN"))]
    for secret in secrets:  # never printed, whatever happened
        assert secret not in printed


def sides(
    source: str, target: str, source_key: tuple[str, str, str], target_key: tuple[str, str, str]
) -> dict[str, str]:
    return {
        "ALIBABA_CLOUD_ENDPOINT": source,
        "ALIBABA_CLOUD_ACCESS_KEY_ID": source_key[1],
        "ALIBABA_CLOUD_ACCESS_KEY_SECRET": source_key[2],
        "MNS_ENDPOINT": target,
        "MNS_ACCESS_KEY_ID": target_key[1],
        "MNS_ACCESS_KEY_SECRET": target_key[2],
    }


def body(rng: random.Random, n: int) -> str:
    """Incompressible text, now and then with characters XML writes specially."""
    noise = base64.b64encode(rng.randbytes(48)).decode()
    return f"{n}:{noise}" + (" <&> ü'\"" if n % 7 == 0 else "")


def build(endpoint: str, key: tuple[str, str, str], prefix: str, queues: int, topics: int, messages: int) -> Estate:
    core = CoreClient(endpoint, key[1], key[2])
    names, fifo = make_queues(core, prefix, queues)
    estate = Estate(prefix, names, fifo, make_topics(core, prefix, topics, names[:-2]))
    send(endpoint, key, estate, messages, random.Random(prefix))
    return estate


def make_queues(core: CoreClient, prefix: str, count: int) -> tuple[list[str], set[str]]:
    """`count` queues: one in five FIFO, attributes varied, tags on a third, logging on half, a receive limit on one,
    a dead-letter policy on a quarter (to two dead-letter queues created after them)."""
    dead, dead_fifo = f"{prefix}-z-dead", f"{prefix}-z-dead-fifo"
    names = [f"{prefix}-q{i:02d}" for i in range(count - 2)]
    fifo = {n for i, n in enumerate(names) if i % 5 == 1} | {dead_fifo}
    for i, name in enumerate([*names, dead, dead_fifo]):
        params: dict[str, object] = {
            "QueueName": name,
            "VisibilityTimeout": 5 + i % 4,
            "PollingWaitSeconds": i % 3,
            "MaximumMessageSize": 65536 - 1024 * (i % 5),
            "MessageRetentionPeriod": 86400 + 60 * i,
            "DelaySeconds": 1 if i % 11 == 4 else 0,
            "EnableLogging": i % LOGGING_EVERY == 0,
        }
        if name in fifo:
            params["QueueType"] = "fifo"
        if i % 3 == 0:
            params.update({"Tag.1.Key": "team", "Tag.1.Value": f"t{i % 4}", "Tag.2.Key": "cost", "Tag.2.Value": "ops"})
        if i == 7:
            params["TenantRateLimitPolicy"] = json.dumps({"Enabled": True, "MaxReceivesPerSecond": 1000})
        core.call("CreateQueue", **params)
    for i, name in enumerate(names):
        if i % 4 == 2:  # the dead-letter queue is created after the queues naming it (apply sets policies last)
            target = dead_fifo if name in fifo else dead
            policy = {"Enabled": True, "DeadLetterTargetQueue": target, "MaxReceiveCount": 3 + i % 5}
            core.call("SetQueueAttributes", QueueName=name, DlqPolicy=json.dumps(policy))
    return [*names, dead, dead_fifo], fifo


def make_topics(core: CoreClient, prefix: str, count: int, queues: list[str]) -> list[str]:
    """`count` topics, each with a subscription of every push kind served (queue, HTTP, mail, SMS)."""
    names = [f"{prefix}-t{i}" for i in range(count)]
    for i, topic in enumerate(names):
        params: dict[str, object] = {"TopicName": topic, "MaxMessageSize": 65536 - 1024 * (i % 3)}
        params["EnableLogging"] = i % 2 == 1
        if i % 2 == 0:
            params.update({"Tag.1.Key": "owner", "Tag.1.Value": f"team-{i}"})
        core.call("CreateTopic", **params)
        for j, (kind, value) in enumerate(PUSH_KINDS):
            sub = {"TopicName": topic, "SubscriptionName": f"s-{kind}", "PushType": kind}
            sub["Endpoint"] = value or queues[(i + j) % len(queues)]
            sub["NotifyStrategy"] = "EXPONENTIAL_DECAY_RETRY" if j % 2 else "BACKOFF_RETRY"
            sub["NotifyContentFormat"] = ("XML", "JSON", "SIMPLIFIED", "SIMPLIFIED")[j]
            if i % 3 == 0:
                sub["MessageTag"] = f"tag-{j}"
            core.call("Subscribe", **sub)
    return names


def send(endpoint: str, key: tuple[str, str, str], estate: Estate, messages: int, rng: random.Random) -> None:
    """`messages` spread over the estate's queues in batches of 16: priorities 1-16, a delay of 1-2 s on one in 25,
    five groups per FIFO queue, each group's messages numbered in the order sent."""
    account = Account(endpoint, key[1], key[2])
    per_queue = {q: [] for q in estate.queues}
    for n in range(messages):
        per_queue[estate.queues[n % len(estate.queues)]].append(n)
    for queue_name, numbers in per_queue.items():
        queue = account.get_queue(queue_name)
        queue.set_encoding(False)
        for start in range(0, len(numbers), 16):
            batch, now_ms = [], int(time.time() * 1000)
            for n in numbers[start : start + 16]:
                group = f"g{n % 5}" if queue_name in estate.fifo else ""
                delay = (1 + n % 2) if n % 25 == 3 and not group else 0
                sent = Sent(
                    queue_name, body(rng, n), None if group else rng.randint(1, 16), group, now_ms + 1000 * delay
                )
                estate.sent.append(sent)
                batch.append(Message(sent.body, None if group else delay, sent.priority, group))
            queue.batch_send_message(batch)


def _patient(action, retry_throttled: bool):  # type: ignore[no-untyped-def]
    """`action()`, tried again while refused past the account's request limit when `retry_throttled`."""
    while True:
        try:
            return action()
        except MNSServerException as error:
            if not (retry_throttled and error.type == "QpsLimitExceeded"):
                raise
            time.sleep(0.2)


def _held(queue) -> int:  # type: ignore[no-untyped-def]
    meta = queue.get_attributes()
    return meta.inactive_messages + meta.delay_messages


def receive_all(
    endpoint: str, key: tuple[str, str, str], queue: str, retry_throttled: bool = False
) -> list[tuple[str, int, str, int]]:
    """Every message of `queue`, deleted as read: (body, priority, group, enqueue time in ms) in the order first
    received. A message whose delete came too late (a slow receive outlasted its visibility timeout) is received
    again and kept once, by its id."""
    q = Account(endpoint, key[1], key[2]).get_queue(queue)
    q.set_encoding(False)
    found: dict[str, tuple[str, int, str, int]] = {}
    while True:
        try:
            batch = _patient(lambda: q.batch_receive_message(16, 0), retry_throttled)
        except MNSServerException as error:
            if error.type != "MessageNotExist":
                raise
            if not _patient(lambda: _held(q), retry_throttled):
                return list(found.values())
            time.sleep(0.2)  # delayed (a FIFO queue's own delay) or in flight (a delete came too late)
            continue
        for m in batch:
            found.setdefault(m.message_id, (m.message_body, m.priority, m.message_group_id or "", m.enqueue_time))
        handles = [m.receipt_handle for m in batch]
        try:
            _patient(lambda: q.batch_delete_message(handles), retry_throttled)  # noqa: B023 (called at once)
        except MNSServerException as error:
            if error.type != "MessageNotExist":
                raise


def configuration(endpoint: str, key: tuple[str, str, str], estate: Estate) -> dict[str, object]:
    """Every queue's, topic's and subscription's attributes as the core SDK reads them, without times and counts; a
    queue endpoint's account written as `{account}`."""
    core = CoreClient(endpoint, key[1], key[2])
    found: dict[str, object] = {}
    for q in estate.queues:
        data = core.call("GetQueueAttributes", QueueName=q)["Data"]
        found[f"queue {q}"] = {k: v for k, v in data.items() if k not in TIMES}
    for t in estate.topics:
        data = core.call("GetTopicAttributes", TopicName=t)["Data"]
        found[f"topic {t}"] = {k: v for k, v in data.items() if k not in TOPIC_TIMES}
        subs = core.call("ListSubscriptionByTopic", TopicName=t, PageNum=1, PageSize=50)["Data"]["PageData"]
        for s in subs:
            s = {
                k: v for k, v in s.items() if k not in ("CreateTime", "LastModifyTime", "TopicOwner", "SubscriptionURL")
            }
            s["Endpoint"] = s["Endpoint"].replace(key[0], "{account}")
            found[f"subscription {t}/{s['SubscriptionName']}"] = s
    return found


def quiet_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith(("ALIBABA_CLOUD_", "MNS_"))}
