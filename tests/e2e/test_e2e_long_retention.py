"""Retention past MNS's 7 days, end to end on a server of its own whose clock the test moves 15 days on: the SDK
creates a queue kept 1,296,000 s (CMQ's longest) and reads it back; its message is still there 14 days after its
send and gone after 15. The server checks a request's date against its own clock (15 minutes either way), so the
calls after the move are raw requests dated by the server's clock."""

from __future__ import annotations

import uuid
from email.utils import formatdate

import pytest
from mns.account import Account
from mns.queue import Message, QueueMeta

from tests.support.local_server import ServerClock
from tests.support.raw_http import NS, RawClient, RawResponse, assert_mns_error
from tests.support.servers import ACCOUNT_A, local_server

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

DAY = 86_400
FIFTEEN_DAYS = 1_296_000


@pytest.fixture(scope="module")
def retention_clock(tmp_path_factory, engine) -> ServerClock:
    return ServerClock(tmp_path_factory.mktemp(f"retention-clock-{engine}") / "offset")


@pytest.fixture(scope="module")
def retention_endpoint(tmp_path_factory, engine, retention_clock):
    with local_server(tmp_path_factory, engine, "retention", retention_clock) as url:
        yield url


def on_server_time(raw: RawClient, clock: ServerClock, method: str, resource: str) -> RawResponse:
    return raw.request(method, resource, date=formatdate(clock.now(), usegmt=True))


def test_a_queue_kept_15_days_keeps_a_message_14_days_and_not_15(retention_endpoint, retention_clock):
    account = Account(retention_endpoint, ACCOUNT_A[1], ACCOUNT_A[2])
    raw = RawClient(retention_endpoint, ACCOUNT_A[1], ACCOUNT_A[2])
    name = "keep-" + uuid.uuid4().hex[:16]
    queue = account.get_queue(name)
    queue.set_encoding(False)
    meta = QueueMeta()
    meta.set_message_retention_period(FIFTEEN_DAYS)
    queue.create(meta)
    assert queue.get_attributes().message_retention_period == FIFTEEN_DAYS
    sent = queue.send_message(Message("kept a fortnight"))

    retention_clock.advance(14 * DAY)
    got = on_server_time(raw, retention_clock, "GET", f"/queues/{name}/messages")
    assert got.status == 200, got.body
    assert got.xml().find(NS + "MessageId").text == sent.message_id
    assert got.xml().find(NS + "MessageBody").text == "kept a fortnight"

    retention_clock.advance(DAY + 1)  # 15 days and a second after the send (its visibility long over)
    assert_mns_error(on_server_time(raw, retention_clock, "GET", f"/queues/{name}/messages"), 404, "MessageNotExist")
    attributes = on_server_time(raw, retention_clock, "GET", f"/queues/{name}").xml()
    counts = [attributes.find(NS + c).text for c in ("ActiveMessages", "InactiveMessages", "DelayMessages")]
    assert counts == ["0", "0", "0"]
