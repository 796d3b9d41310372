"""Restarts of `python -m local_runtime` on its embedded engine: what was acknowledged is still there.

Each case runs its own server on a data directory, stops it (gracefully, or with SIGKILL as a
crash), starts a new one on the same directory and checks queues, topics, subscriptions and
messages, an in-flight message keeping its visibility and its receipt handle.
"""

from __future__ import annotations

import signal
import subprocess

import pytest
from mns.account import Account
from mns.mns_exception import MNSExceptionBase
from mns.queue import Message, QueueMeta
from mns.subscription import SubscriptionMeta
from mns.topic import TopicMeta

from tests.support.local_server import free_port, start_server
from tests.support.servers import ACCOUNT_A, server_env


def stop(proc: subprocess.Popen, how: str) -> None:
    proc.send_signal(signal.SIGKILL if how == "kill" else signal.SIGTERM)
    proc.wait(timeout=20)


@pytest.mark.parametrize("how", ["graceful", "kill"])
def test_a_restart_keeps_everything_acknowledged(tmp_path, how):
    port = free_port()
    env = server_env(port, MNS_ENGINE="sqlite", MNS_DATA_DIR=str(tmp_path / "data"))
    env.pop("MNS_RECEIPT_SECRET", None)
    log = tmp_path / "server.log"
    proc = start_server(env, port, log)
    try:
        account = Account(f"http://127.0.0.1:{port}", ACCOUNT_A[1], ACCOUNT_A[2])
        queue = account.get_queue("kept")
        queue.create(QueueMeta(vis_timeout=120, max_msg_size=2048))
        topic = account.get_topic("kept-topic")
        topic.create(TopicMeta(maximum_message_size=4096))
        topic.get_subscription("sub").subscribe(SubscriptionMeta("http://127.0.0.1:9/push"))
        for n in range(5):
            queue.send_message(Message(f"body-{n}", priority=1 + n))
        in_flight = queue.receive_message(1)  # body-0, hidden for 120 s
        retimed = queue.receive_message(1)  # body-1, then hidden for 300 s
        retimed_handle = queue.change_message_visibility(retimed.receipt_handle, 300).receipt_handle
        gone = queue.receive_message(1)  # body-2, deleted
        queue.delete_message(gone.receipt_handle)
    except BaseException:
        proc.kill()
        raise
    stop(proc, how)

    proc = start_server(env, port, log)
    try:
        account = Account(f"http://127.0.0.1:{port}", ACCOUNT_A[1], ACCOUNT_A[2])
        queue = account.get_queue("kept")
        attributes = queue.get_attributes()
        assert (attributes.visibility_timeout, attributes.maximum_message_size) == (120, 2048)
        assert account.get_topic("kept-topic").get_attributes().maximum_message_size == 4096
        subscription = account.get_topic("kept-topic").get_subscription("sub").get_attributes()
        assert subscription.endpoint == "http://127.0.0.1:9/push"
        # The in-flight messages stay hidden; the others come in priority order.
        bodies = [queue.receive_message(1).message_body for _ in range(2)]
        assert bodies == [b"body-3", b"body-4"]
        with pytest.raises(MNSExceptionBase) as empty:
            queue.receive_message(0)
        assert empty.value.type == "MessageNotExist"
        assert (attributes.active_messages, attributes.inactive_messages) == (2, 2)
        # Receipt handles issued before the restart still work.
        queue.delete_message(in_flight.receipt_handle)
        queue.delete_message(retimed_handle)
        with pytest.raises(MNSExceptionBase) as stale:
            queue.delete_message(gone.receipt_handle)
        assert stale.value.type == "MessageNotExist"
    finally:
        stop(proc, "graceful")


def test_a_data_directory_whose_name_has_a_dot_holds_the_database(tmp_path):
    data = tmp_path / "tmp.Ab12"  # as `mktemp -d` names directories
    data.mkdir()
    port = free_port()
    proc = start_server(server_env(port, MNS_ENGINE="sqlite", MNS_DATA_DIR=str(data)), port, tmp_path / "server.log")
    try:
        queue = Account(f"http://127.0.0.1:{port}", ACCOUNT_A[1], ACCOUNT_A[2]).get_queue("dotted")
        queue.create(QueueMeta())
        queue.send_message(Message("kept"))
    finally:
        stop(proc, "graceful")
    assert (data / "mns.sqlite3").is_file()
    assert (data / "receipt-secret").is_file()
