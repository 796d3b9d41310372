"""`python -m migrate` between two local servers (the source on SQLite with account A, the target on each engine with
account B): an estate copied and its messages moved and verified, the same apply run twice, a source killed and a
target throttling mid-drain, a bridge under a producer and a consumer, the reverse direction, and bad input."""

from __future__ import annotations

import collections
import json
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest
from conftest import ACCOUNT_A, ACCOUNT_B, local_server
from migrate_estate import Estate, build, configuration, quiet_env, receive_all, run, sides


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    with local_server(tmp_path_factory, "sqlite", "migrate-source") as url:
        yield url


@pytest.fixture(scope="module")
def target(tmp_path_factory, engine):
    with local_server(tmp_path_factory, engine, "migrate-target") as url:
        yield url


@pytest.fixture
def prefix() -> str:
    return "m" + uuid.uuid4().hex[:8]


def env_for(source: str, target: str) -> dict[str, str]:
    return {**quiet_env(), **sides(source, target, ACCOUNT_A, ACCOUNT_B)}


def assert_moved(estate: Estate, target: str) -> None:
    """Every message sent is on the target once, with its body, priority and group; each FIFO group in the order
    sent; a delayed message not before its time."""
    sent_by_queue = collections.defaultdict(list)
    for s in estate.sent:
        sent_by_queue[s.queue].append(s)
    with ThreadPoolExecutor(max_workers=4) as pool:
        received = dict(zip(estate.queues, pool.map(lambda q: receive_all(target, ACCOUNT_B, q), estate.queues)))
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


def migrate_estate(source, target, prefix, tmp_path, messages):
    estate = build(source, ACCOUNT_A, prefix, queues=50, topics=10, messages=messages)
    env = env_for(source, target)
    code, out, _ = run(["plan", "--prefix", prefix, "--json"], env, tmp_path)
    assert code == 0
    summary = json.loads(out)["summary"]
    assert summary["create"] == 50 + 10 + 40 and summary["not-carried"] == 0
    assert run(["apply", "--prefix", prefix], env, tmp_path)[0] == 0
    code, out, _ = run(["apply", "--prefix", prefix], env, tmp_path)
    assert (code, out.strip()) == (0, "0 applied, 0 failed, 0 in conflict")
    code, out, _ = run(["plan", "--prefix", prefix, "--json"], env, tmp_path)
    assert json.loads(out)["summary"]["unchanged"] == 100
    assert configuration(target, ACCOUNT_B, estate) == configuration(source, ACCOUNT_A, estate)
    code, out, err = run(["drain", "--prefix", prefix, "--json", "--state", str(tmp_path / "state")], env, tmp_path)
    assert code == 0, (out, err)
    totals = json.loads(out)["totals"]
    assert totals["moved"] == messages and totals["left_on_source"] == 0 and totals["failed_queues"] == 0
    code, out, _ = run(["verify", "--prefix", prefix], env, tmp_path)
    assert code == 0, out
    assert out.rstrip().endswith("SAME: configuration matches and no message waits on the source")
    assert_moved(estate, target)


def test_an_estate_of_fifty_queues_and_ten_topics_moves_with_its_messages(source, target, prefix, tmp_path):
    migrate_estate(source, target, prefix, tmp_path, messages=800)


@pytest.mark.slow
def test_ten_thousand_waiting_messages_move(source, target, prefix, tmp_path):
    started = time.monotonic()
    migrate_estate(source, target, prefix, tmp_path, messages=10_000)
    assert time.monotonic() - started < 120
