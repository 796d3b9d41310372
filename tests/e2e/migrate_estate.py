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

from migrate.batching import cut
from migrate.cli import main
from mnsclient.messages import body_bytes
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
# Body sizes in UTF-8 bytes (the service's unit), each at most its queue's MaximumMessageSize: a few bytes to 64 KB.
SIZES = (3, 40, 300, 1024, 3000, 8 * 1024, 12 * 1024, 20 * 1024, 33 * 1024, 47 * 1024, 60 * 1024, 64 * 1024)
ENCODINGS = ("markup", "cjk", "base64 text", "base64 bytes")  # as MNS clients send bodies
WORDS = ("order", "parcel", "invoice", "north", "express", "<b>", "&amp;", "a < b", "c > d", "R&D", '"q"', "it's")
CJK = "订单已发货请查收消息队列服务主题订阅推送华东杭州上海深圳北京"


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
    largest: dict[str, int]  # each queue's MaximumMessageSize
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


def _text(rng: random.Random, words: tuple[str, ...], size: int, space: str = " ") -> str:
    """`words` drawn at random, joined by `space`, cut to at most `size` UTF-8 bytes on a character."""
    parts, total = [], 0
    while total < size:
        word = rng.choice(words)
        parts.append(word)
        total += len(word.encode("utf-8")) + len(space)
    return space.join(parts).encode("utf-8")[:size].decode("utf-8", "ignore")


def sized_body(rng: random.Random, n: int, size: int, encoding: str) -> str:
    """A body of at most `size` UTF-8 bytes (within 3 of it), unique by `n`, as clients send one: plain text with XML
    metacharacters, UTF-8 text with CJK, or base64 (as the SDKs encode a body) of text or of random bytes."""
    head = f"{n}:"
    size = max(size, len(head) + 4)
    if encoding == "markup":
        return head + _text(rng, WORDS, size - len(head))
    if encoding == "cjk":
        return head + _text(rng, (*CJK, "，", "。", " MNS ", "2026"), size - len(head), space="")
    raw = 3 * (size // 4) - len(head)  # base64 writes 3 bytes as 4 characters
    data = _text(rng, WORDS, raw).encode() if encoding == "base64 text" else rng.randbytes(raw)
    return base64.b64encode(head.encode() + data).decode()


def build(
    endpoint: str,
    key: tuple[str, str, str],
    prefix: str,
    queues: int,
    topics: int,
    messages: int,
    sized: bool = True,
) -> Estate:
    """The estate on `endpoint`, its messages of every size and encoding (`sized`) or of about 70 bytes each."""
    core = CoreClient(endpoint, key[1], key[2])
    names, fifo, largest = make_queues(core, prefix, queues)
    estate = Estate(prefix, names, fifo, make_topics(core, prefix, topics, names[:-2]), largest)
    send(endpoint, key, estate, messages, random.Random(prefix), sized=sized)
    return estate


def make_queues(core: CoreClient, prefix: str, count: int) -> tuple[list[str], set[str], dict[str, int]]:
    """`count` queues: one in five FIFO, attributes varied, tags on a third, logging on half, a receive limit on one,
    a dead-letter policy on a quarter (to two dead-letter queues created after them)."""
    dead, dead_fifo = f"{prefix}-z-dead", f"{prefix}-z-dead-fifo"
    names = [f"{prefix}-q{i:02d}" for i in range(count - 2)]
    fifo = {n for i, n in enumerate(names) if i % 5 == 1} | {dead_fifo}
    largest: dict[str, int] = {}
    for i, name in enumerate([*names, dead, dead_fifo]):
        largest[name] = 65536 - 1024 * (i % 5)
        params: dict[str, object] = {
            "QueueName": name,
            "VisibilityTimeout": 5 + i % 4,
            "PollingWaitSeconds": i % 3,
            "MaximumMessageSize": largest[name],
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
    return [*names, dead, dead_fifo], fifo, largest


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


def send(
    endpoint: str, key: tuple[str, str, str], estate: Estate, messages: int, rng: random.Random, sized: bool = True
) -> None:
    """`messages` spread over the estate's queues, sent in batches as the service takes them (at most 16 and 64 KB of
    bodies): priorities 1-16, a delay of 1-2 s on one in 25, five groups per FIFO queue, each group's messages
    numbered in the order sent; `sized`: each queue's bodies through every size (`SIZES`, each at most the queue's
    MaximumMessageSize) and encoding (`ENCODINGS`), else about 70 bytes each."""
    account = Account(endpoint, key[1], key[2])
    per_queue = {q: [] for q in estate.queues}
    for n in range(messages):
        per_queue[estate.queues[n % len(estate.queues)]].append(n)
    for queue_name, numbers in per_queue.items():
        queue = account.get_queue(queue_name)
        queue.set_encoding(False)
        earlier = sum(1 for s in estate.sent if s.queue == queue_name)  # the queue's sizes go on where they were
        for start in range(0, len(numbers), 16):
            batch, now_ms = [], int(time.time() * 1000)
            for j, n in enumerate(numbers[start : start + 16], start=earlier + start):
                group = f"g{n % 5}" if queue_name in estate.fifo else ""
                delay = (1 + n % 2) if n % 25 == 3 and not group else 0
                size = min(SIZES[j % len(SIZES)], estate.largest[queue_name])
                text = sized_body(rng, n, size, ENCODINGS[(j // len(SIZES) + j) % 4]) if sized else body(rng, n)
                sent = Sent(queue_name, text, None if group else rng.randint(1, 16), group, now_ms + 1000 * delay)
                estate.sent.append(sent)
                batch.append(Message(sent.body, None if group else delay, sent.priority, group))
            for run in cut(batch, lambda m: body_bytes(m.message_body)):
                queue.batch_send_message(run)


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
