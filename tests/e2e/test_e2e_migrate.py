"""`python -m migrate` between two local servers (the source on SQLite with account A, the target on each engine with
account B): an estate copied and its messages moved and verified, the same apply run twice, a source killed and a
target throttling mid-drain, a bridge under a producer and a consumer, the reverse direction, and bad input."""

from __future__ import annotations

import base64
import binascii
import collections
import json
import random
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import parse_qsl, urlsplit

import pytest
from mns.account import Account
from mns.queue import Message, QueueMeta

from tests.e2e.migrate_estate import (
    ENCODINGS,
    PUSH_KINDS,
    Estate,
    build,
    configuration,
    interrupt,
    quiet_env,
    receive_all,
    run,
    send,
    sides,
    sized_body,
    start,
)
from tests.e2e.mns_open_clients import CoreClient
from tests.support.local_server import free_port, start_server, stop_server
from tests.support.raw_http import NS, RawClient
from tests.support.servers import ACCOUNT_A, ACCOUNT_B, local_server, server_env
from tests.support.stub_http import QuietHandler, serving


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    with local_server(tmp_path_factory, "sqlite", "migrate-source") as url:
        yield url


@pytest.fixture(scope="module")
def engine_target(tmp_path_factory, engine):
    """A target on each engine (for the estate moved to each)."""
    with local_server(tmp_path_factory, engine, "migrate-target") as url:
        yield url


@pytest.fixture(scope="module")
def target(tmp_path_factory):
    """The target of the failure cases: the tool's behaviour does not depend on the engine, and the SQLite engine is
    the quicker of the two."""
    with local_server(tmp_path_factory, "sqlite", "migrate-sqlite-target") as url:
        yield url


@pytest.fixture
def prefix() -> str:
    return "m" + uuid.uuid4().hex[:8]


def env_for(source: str, target: str) -> dict[str, str]:
    return {**quiet_env(), **sides(source, target, ACCOUNT_A, ACCOUNT_B)}


def assert_moved(estate: Estate, target: str, key=ACCOUNT_B, retry_throttled: bool = False) -> None:
    """Every message sent is on the target once, with its body, priority and group; each FIFO group in the order
    sent; a delayed message not before its time."""
    sent_by_queue = collections.defaultdict(list)
    for s in estate.sent:
        sent_by_queue[s.queue].append(s)
    with ThreadPoolExecutor(max_workers=4) as pool:
        found = pool.map(lambda q: receive_all(target, key, q, retry_throttled), estate.queues)
        received = dict(zip(estate.queues, found, strict=True))
    for queue in estate.queues:
        got = received[queue]
        sent = sent_by_queue[queue]
        assert sorted(b for b, _, _, _ in got) == sorted(s.body for s in sent), queue
        wanted = {s.body: s for s in sent}
        for body, priority, group, enqueued in got:
            assert group == wanted[body].group
            assert wanted[body].priority in (None, priority)
            assert enqueued >= wanted[body].due_ms - 50  # never visible before its delay was over
        if queue in estate.fifo:
            for group in {s.group for s in sent}:
                assert [b for b, _, g, _ in got if g == group] == [s.body for s in sent if s.group == group]


def migrate_estate(source, target, prefix, tmp_path, queues, topics, messages, sized=True) -> Estate:
    """The estate made on the source, planned, applied twice, drained and verified, then read on the target."""
    estate = build(source, ACCOUNT_A, prefix, queues=queues, topics=topics, messages=messages, sized=sized)
    env = env_for(source, target)
    code, out, _ = run(["plan", "--prefix", prefix, "--json"], env, tmp_path)
    assert code == 0
    summary = json.loads(out)["summary"]
    resources = queues + topics * (1 + len(PUSH_KINDS))
    assert summary["create"] == resources and summary["not-carried"] == 0
    assert run(["apply", "--prefix", prefix], env, tmp_path)[0] == 0
    code, out, _ = run(["apply", "--prefix", prefix], env, tmp_path)
    assert (code, out.strip()) == (0, "0 applied, 0 failed, 0 in conflict")
    code, out, _ = run(["plan", "--prefix", prefix, "--json"], env, tmp_path)
    assert json.loads(out)["summary"]["unchanged"] == resources
    assert configuration(target, ACCOUNT_B, estate) == configuration(source, ACCOUNT_A, estate)
    code, out, err = run(["drain", "--prefix", prefix, "--json", "--state", str(tmp_path / "state")], env, tmp_path)
    assert code == 0, (out, err)
    totals = json.loads(out)["totals"]
    assert totals["moved"] == messages and totals["left_on_source"] == 0 and totals["failed_queues"] == 0
    code, out, _ = run(["verify", "--prefix", prefix], env, tmp_path)
    assert code == 0, out
    assert out.rstrip().endswith("SAME: configuration matches and no message waits on the source")
    assert_moved(estate, target)
    return estate


def is_base64(body: str) -> bool:
    """A body of base64, padded or not (about a third of them end without `=`)."""
    if not body.isascii() or len(body) % 4:
        return False
    try:
        base64.b64decode(body, validate=True)
    except binascii.Error:
        return False
    return True


def test_an_estate_moves_to_each_engine(source, engine_target, prefix, tmp_path):
    estate = migrate_estate(source, engine_target, prefix, tmp_path, queues=8, topics=2, messages=240)
    sizes = [len(s.body.encode("utf-8")) for s in estate.sent]  # the bodies moved: real sizes and encodings
    assert min(sizes) <= 8 and max(sizes) == 65536 and sum(sizes) > 240 * 16 * 1024
    assert any("<" in s.body and "&" in s.body for s in estate.sent)
    assert any(len(s.body.encode("utf-8")) > 2 * len(s.body) for s in estate.sent)  # mostly CJK: 3 bytes each
    assert sum(is_base64(s.body) for s in estate.sent) > 4  # base64 of text and of random bytes


def test_a_queue_of_8_to_60_kb_messages_drains_whole_and_a_fifo_queue_keeps_each_group_in_order(
    source, target, prefix, tmp_path
):
    """16 such messages are 128 KB to 960 KB of bodies, above the 64 KB a BatchSendMessage may carry: every message
    moves once, with its body and priority, each FIFO group in the order sent."""
    standard, fifo = f"{prefix}-large", f"{prefix}-large-fifo"
    account = Account(source, ACCOUNT_A[1], ACCOUNT_A[2])
    account.get_queue(standard).create(QueueMeta())
    CoreClient(source, ACCOUNT_A[1], ACCOUNT_A[2]).call("CreateQueue", QueueName=fifo, QueueType="fifo")
    rng = random.Random(prefix)
    sent: dict[str, list[tuple[str, int | None, str]]] = {standard: [], fifo: []}
    for n in range(96):
        name = (standard, fifo)[n % 2]
        body = sized_body(rng, n, rng.randint(8 * 1024, 60 * 1024), ENCODINGS[n // 2 % 4])
        priority, group = (rng.randint(1, 16), "") if name == standard else (None, f"g{n % 3}")
        queue = account.get_queue(name)
        queue.set_encoding(False)
        queue.send_message(Message(body, None if group else 0, priority, group))
        sent[name].append((body, priority, group))
    env = env_for(source, target)
    assert run(["apply", "--prefix", standard], env, tmp_path)[0] == 0
    state = ["--state", str(tmp_path / "state"), "--json", "--queue", standard, "--queue", fifo]
    code, out, err = run(["drain", *state], env, tmp_path)
    assert code == 0, (out, err)
    totals = json.loads(out)["totals"]
    assert (totals["moved"], totals["possible_duplicates"], totals["left_on_source"]) == (96, 0, 0)
    got = {name: receive_all(target, ACCOUNT_B, name) for name in (standard, fifo)}
    assert sorted((b, p) for b, p, _, _ in got[standard]) == sorted((b, p) for b, p, _ in sent[standard])
    assert sorted(b for b, _, _, _ in got[fifo]) == sorted(b for b, _, _ in sent[fifo])
    for group in ("g0", "g1", "g2"):
        assert [b for b, _, g, _ in got[fifo] if g == group] == [b for b, _, g in sent[fifo] if g == group]
    assert run(["verify", "--prefix", standard], env, tmp_path)[0] == 0


@pytest.mark.parametrize(
    ("target_engine", "messages"),
    # moto: 67 s on a machine at load 13 (60 s beside it with bodies of 70 bytes: moto's FIFO deletes, not the sizes)
    [("sqlite", 800), pytest.param("moto", 800, marks=pytest.mark.slow)],
)
def test_an_estate_of_fifty_queues_and_ten_topics_moves_with_its_messages(
    source, tmp_path_factory, prefix, tmp_path, target_engine, messages
):
    with local_server(tmp_path_factory, target_engine, f"migrate-estate-{target_engine}") as target:
        migrate_estate(source, target, prefix, tmp_path, queues=50, topics=10, messages=messages)


@pytest.mark.slow
def test_ten_thousand_waiting_messages_move(source, tmp_path_factory, prefix, tmp_path):
    """About 15 s on a quiet machine, 26 s on a loaded one: behind the slow marker."""
    with local_server(tmp_path_factory, "sqlite", "migrate-estate") as target:
        migrate_estate(source, target, prefix, tmp_path, queues=50, topics=10, messages=10_000, sized=False)


def total_on(endpoint: str, key, queues: list[str]) -> int:
    account = Account(endpoint, key[1], key[2])
    return sum(account.get_queue(q).get_attributes().active_messages for q in queues)


def test_a_source_killed_mid_drain_and_restarted_then_drained_again_loses_nothing(target, prefix, tmp_path):
    port = free_port()
    data = tmp_path / "source-data"
    data.mkdir()
    source_env = server_env(port, MNS_ENGINE="sqlite", MNS_DATA_DIR=str(data))
    proc = start_server(source_env, port, tmp_path / "source.log")
    source = f"http://127.0.0.1:{port}"
    try:
        estate = build(source, ACCOUNT_A, prefix, queues=4, topics=0, messages=1600, sized=False)
        env = env_for(source, target)
        assert run(["apply", "--prefix", prefix], env, tmp_path)[0] == 0

        def kill_when_some_moved() -> None:
            while total_on(target, ACCOUNT_B, estate.queues) < 300:
                time.sleep(0.02)
            proc.kill()

        killer = threading.Thread(target=kill_when_some_moved)
        killer.start()
        state = ["--state", str(tmp_path / "state"), "--json", "--queue"]
        args = ["drain", "--retry-for", "1", *[a for q in estate.queues for a in (*state, q)]]
        code, out, _ = run(args, env, tmp_path)
        killer.join()
        first = json.loads(out)
        assert code == 1
        assert any("the source answered NetworkError" in q["error"] for q in first["queues"]), first
        assert 300 <= first["totals"]["moved"] < 1600

        proc = start_server(source_env, port, tmp_path / "source.log")
        code, out, _ = run(["drain", "--retry-for", "30", *args[3:]], env, tmp_path)
        second = json.loads(out)["totals"]
        assert code == 0, out
        assert first["totals"]["moved"] + second["moved"] == 1600  # each message sent to the target once
        assert second["possible_duplicates"] == 0 and second["left_on_source"] == 0
        assert_moved(estate, target)
    finally:
        stop_server(proc)


def test_a_target_refusing_past_its_request_limit_then_drained_again_loses_nothing(
    source, tmp_path_factory, prefix, tmp_path
):
    with local_server(tmp_path_factory, "sqlite", "migrate-throttled", MNS_ACCOUNT_REQUESTS_PER_SECOND="5") as target:
        estate = build(source, ACCOUNT_A, prefix, queues=4, topics=0, messages=200, sized=False)
        env = env_for(source, target)
        assert run(["apply", "--prefix", prefix], env, tmp_path)[0] == 0
        state = ["--prefix", prefix, "--state", str(tmp_path / "state"), "--json"]
        code, out, _ = run(["drain", "--retry-for", "0", *state], env, tmp_path)
        first = json.loads(out)
        assert code == 1
        refused = [q for q in first["queues"] if "the target answered QpsLimitExceeded" in q["error"]]
        assert refused and all(q["error"].startswith(f"queue {q['queue']}: ") for q in refused)
        code, out, _ = run(["drain", "--retry-for", "60", *state], env, tmp_path)
        second = json.loads(out)["totals"]
        assert code == 0, out
        assert first["totals"]["moved"] + second["moved"] == 200 and second["retries"] > 0
        time.sleep(1)  # the second's requests counted against the limit
        assert_moved(estate, target, retry_throttled=True)


def test_a_bridge_moves_what_a_producer_sends_while_a_consumer_reads_the_target(source, target, prefix, tmp_path):
    estate = build(source, ACCOUNT_A, prefix, queues=3, topics=0, messages=30)
    env = env_for(source, target)
    assert run(["apply", "--prefix", prefix], env, tmp_path)[0] == 0
    bridge = start(["bridge", "--prefix", prefix, "--json", "--state", str(tmp_path / "s")], env, tmp_path)
    consumed: list[tuple[str, int, str, int]] = []
    stop = threading.Event()

    def consume() -> None:
        while not stop.is_set():
            for queue in estate.queues:
                consumed.extend((*m[:3], queue) for m in receive_all(target, ACCOUNT_B, queue))
            time.sleep(0.05)

    consumer = threading.Thread(target=consume)
    consumer.start()
    try:
        rng = random.Random(prefix)
        for _ in range(10):  # 300 more messages over about 3 s, while the bridge runs
            send(source, ACCOUNT_A, estate, 30, rng)
            time.sleep(0.3)
        deadline = time.monotonic() + 120
        while len(consumed) < len(estate.sent) and bridge.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)  # stopped only once the consumer has had everything: no race with the producer's last
    finally:
        stop.set()
        consumer.join()
    code, out, err = interrupt(bridge, env)  # Ctrl-C: the bridge ends its batch in hand, then its summary
    assert code == 130, err
    assert json.loads(out)["totals"]["moved"] == 330
    for queue in estate.queues:
        consumed.extend((*m[:3], queue) for m in receive_all(target, ACCOUNT_B, queue))
    assert sorted(b for b, *_ in consumed) == sorted(s.body for s in estate.sent)
    assert total_on(source, ACCOUNT_A, estate.queues) == 0
    for queue in estate.fifo:
        for group in {s.group for s in estate.sent if s.queue == queue}:
            in_order = [s.body for s in estate.sent if s.queue == queue and s.group == group]
            assert [b for b, _, g, q in consumed if q == queue and g == group] == in_order


def test_a_bridge_run_for_a_while_stops_by_itself(source, target, prefix, tmp_path):
    estate = build(source, ACCOUNT_A, prefix, queues=1, topics=0, messages=0)
    env = env_for(source, target)
    assert run(["apply", "--prefix", prefix], env, tmp_path)[0] == 0
    ran: list[tuple[int, str, str]] = []
    args = ["bridge", "--prefix", prefix, "--for", "1", "--json", "--state", str(tmp_path / "s")]
    bridging = threading.Thread(target=lambda: ran.append(run(args, env, tmp_path)), daemon=True)
    bridging.start()
    bridging.join(timeout=30)
    assert ran, "the bridge ran on past --for"
    code, out, _ = ran[0]
    summary = json.loads(out)
    assert code == 0, out  # stopped by its time, not interrupted
    assert summary["seconds"] >= 1 and [q["queue"] for q in summary["queues"]] == estate.queues


def test_the_reverse_direction_moves_messages_back(source, target, prefix, tmp_path):
    estate = build(source, ACCOUNT_A, prefix, queues=3, topics=2, messages=120)
    forward, back = env_for(source, target), {**quiet_env(), **sides(target, source, ACCOUNT_B, ACCOUNT_A)}
    assert run(["apply", "--prefix", prefix], forward, tmp_path)[0] == 0
    assert run(["drain", "--prefix", prefix, "--state", str(tmp_path / "s")], forward, tmp_path)[0] == 0
    assert total_on(target, ACCOUNT_B, estate.queues) == 120
    code, out, _ = run(["plan", "--prefix", prefix, "--json"], back, tmp_path)
    assert json.loads(out)["summary"]["unchanged"] == 3 + 2 + 2 * 4
    assert run(["drain", "--prefix", prefix, "--state", str(tmp_path / "s")], back, tmp_path)[0] == 0
    assert run(["verify", "--prefix", prefix], back, tmp_path)[0] == 0
    assert_moved(estate, source, key=ACCOUNT_A)


# ---------------------------------------------------------------- bad input


def test_an_unreachable_source_is_named(target, tmp_path):
    env = {**env_for(f"http://127.0.0.1:{free_port()}", target)}
    code, _, err = run(["plan", "--retry-for", "0"], env, tmp_path)
    assert code == 1
    assert "the source answered NetworkError: cannot reach http://127.0.0.1:" in err


def test_wrong_keys_are_named_and_never_printed(source, target, tmp_path):
    env = {**env_for(source, target), "ALIBABA_CLOUD_ACCESS_KEY_SECRET": "not-the-secret-9f3k"}
    code, out, err = run(["plan"], env, tmp_path)
    assert code == 1
    assert "the source answered SignatureDoesNotMatch" in err
    assert "not-the-secret-9f3k" not in out + err


def test_a_target_key_without_permission_writes_nothing_and_a_rerun_with_one_finishes(source, target, prefix, tmp_path):
    build(source, ACCOUNT_A, prefix, queues=3, topics=1, messages=0)
    read_only = {
        "Version": "1",
        "Statement": [{"Effect": "Allow", "Action": ["mns:List*", "mns:Get*"], "Resource": "*"}],
    }
    body = (
        '<?xml version="1.0" encoding="UTF-8"?><SecurityToken xmlns="http://mns.aliyuncs.com/doc/v1">'
        f"<DurationSeconds>900</DurationSeconds><Policy>{json.dumps(read_only)}</Policy></SecurityToken>"
    )
    answer = RawClient(target, ACCOUNT_B[1], ACCOUNT_B[2]).request("POST", "/?securitytoken=true", body)
    assert answer.status == 200, answer.body
    token = {child.tag.rsplit("}", 1)[1]: child.text for child in answer.xml()}
    env = {
        **env_for(source, target),
        "MNS_ACCESS_KEY_ID": token["AccessKeyId"],
        "MNS_ACCESS_KEY_SECRET": token["AccessKeySecret"],
        "MNS_SECURITY_TOKEN": token["SecurityToken"],
    }
    code, out, err = run(["apply", "--prefix", prefix, "--retry-for", "0"], env, tmp_path)
    assert code == 1
    assert (
        f"FAILED queue {prefix}-q00: the target answered Forbidden.RAM: You are not authorized to do action mns:CreateQueue"
        in err
    )
    assert token["SecurityToken"] not in out + err and token["AccessKeySecret"] not in out + err
    code, out, _ = run(["plan", "--prefix", prefix, "--json"], env_for(source, target), tmp_path)
    assert json.loads(out)["summary"]["create"] == 3 + 1 + 4  # nothing was written
    assert run(["apply", "--prefix", prefix], env_for(source, target), tmp_path)[0] == 0


def test_a_queue_name_the_target_refuses_is_named_and_the_rest_applied(target, tmp_path):
    good, bad = "m" + uuid.uuid4().hex[:8], "orders_v2"
    queues = [
        {
            "QueueName": n,
            "QueueType": "normal",
            "DelaySeconds": 0,
            "MaximumMessageSize": 65536,
            "MessageRetentionPeriod": 86400,
            "VisibilityTimeout": 30,
            "PollingWaitSeconds": 0,
            "LoggingEnabled": False,
            "Tags": [],
        }
        for n in (bad, good)
    ]

    class AnotherMnsService(QuietHandler):
        """A source that allows names the target does not (Mns-open answers only: the estate is read there)."""

        def do_POST(self) -> None:  # noqa: N802
            action = dict(parse_qsl(urlsplit(self.path).query))["Action"]
            self.rfile.read(int(self.headers["Content-Length"]))
            data = {"PageData": queues if action == "ListQueue" else [], "Pages": 1}
            answer = json.dumps({"RequestId": "r", "Code": 200, "Success": True, "Data": data}).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

    with serving(AnotherMnsService) as other:
        env = {**env_for(other, target)}
        for _ in range(2):  # a rerun fails the same way, changing nothing else
            code, out, err = run(["apply", "--retry-for", "0"], env, tmp_path)
            assert code == 1
            assert f"FAILED queue {bad}: the target answered InvalidQueueName" in err
        assert f"created queue {good}" not in err  # created by the first run, unchanged by the second
    assert Account(target, ACCOUNT_B[1], ACCOUNT_B[2]).get_queue(good).get_attributes().visibility_timeout == 30


def test_a_body_with_markup_and_whitespace_moves_as_it_was_stored(source, target, prefix, tmp_path):
    """Tabs, newlines, markup characters and non-ASCII text come out on the target exactly as the source stores them."""
    name = f"{prefix}-raw"
    Account(source, ACCOUNT_A[1], ACCOUNT_A[2]).get_queue(name).create(QueueMeta())
    body = '<?xml version="1.0" encoding="UTF-8"?><Message xmlns="http://mns.aliyuncs.com/doc/v1/">'
    body += "<MessageBody>line one\n\tline two &lt;&amp;&gt; ü &#233;</MessageBody></Message>"
    sent = RawClient(source, ACCOUNT_A[1], ACCOUNT_A[2]).request("POST", f"/queues/{name}/messages", body)
    assert sent.status == 201, sent.body
    env = env_for(source, target)
    assert run(["apply", "--prefix", name], env, tmp_path)[0] == 0
    assert run(["drain", "--queue", name, "--state", str(tmp_path / "s")], env, tmp_path)[0] == 0
    got = RawClient(target, ACCOUNT_B[1], ACCOUNT_B[2]).request("GET", f"/queues/{name}/messages?waitseconds=1")
    assert got.xml().find(NS + "MessageBody").text == "line one\n\tline two <&> ü é"
