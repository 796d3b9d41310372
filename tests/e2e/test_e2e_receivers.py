"""A queue's receivers against the local server: created, listed and deleted with raw signed requests (the SDK
knows no receivers), then reached by the unchanged official SDK as `account.get_queue("{queue}.{receiver}")`."""

from __future__ import annotations

import pytest
from mns.mns_common import TopicHelper
from mns.mns_exception import MNSServerException
from mns.queue import Message, QueueMeta
from mns.subscription import SubscriptionMeta
from mns.topic import TopicMessage

from tests.e2e.resources import text_queue
from tests.support.raw_http import NS

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

XMLNS = 'xmlns="http://mns.aliyuncs.com/doc/v1"'
ACCOUNT = "1000000000000001"


def receiver_xml(inner: str = "") -> str:
    return f'<?xml version="1.0" encoding="UTF-8"?><Receiver {XMLNS}>{inner}</Receiver>'


def create_receiver(raw_a, queue: str, name: str, inner: str = "", status: int = 201):
    resp = raw_a.request("PUT", f"/queues/{queue}/receivers/{name}", receiver_xml(inner))
    assert resp.status == status, resp.body
    return resp


def fields(element) -> dict[str, str]:
    return {child.tag[len(NS) :]: child.text for child in element}


def drain(queue, expected: int) -> list:
    """Batch receive until `expected` messages came (a few empty long polls at most)."""
    got: list = []
    for _ in range(expected // 16 + 4):
        if len(got) >= expected:
            break
        try:
            got += queue.batch_receive_message(16, 1)
        except MNSServerException as exc:
            assert exc.type == "MessageNotExist"
    return got


def test_the_sdk_receives_deletes_and_reads_a_receiver_by_its_address(account_a, raw_a, qname, mns_error, server_clock):
    plain = text_queue(account_a, qname)
    create_receiver(raw_a, qname, "audit", "<VisibilityTimeout>5</VisibilityTimeout>")
    create_receiver(raw_a, qname, "billing")
    bodies = [f"order-{n}" for n in range(40)]
    for start in range(0, 40, 16):
        plain.batch_send_message([Message(body) for body in bodies[start : start + 16]])

    audit = account_a.get_queue(f"{qname}.audit")
    audit.set_encoding(False)
    peeked = audit.peek_message()
    assert peeked.message_body in bodies and peeked.dequeue_count == 0
    before = int(server_clock.now() * 1000)
    received = drain(audit, 40)
    assert sorted(m.message_body for m in received) == sorted(bodies)
    assert all(before + 4_000 <= m.next_visible_time <= int(server_clock.now() * 1000) + 5_000 for m in received)
    renewed = audit.change_message_visibility(received[0].receipt_handle, 60)
    audit.delete_message(renewed.receipt_handle)
    audit.batch_delete_message([m.receipt_handle for m in received[1:16]])

    meta = audit.get_attributes()
    assert (meta.queue_name, meta.visibility_timeout) == (f"{qname}.audit", 5)
    assert (meta.active_messages, meta.inactive_messages) == (0, 24)
    billing = account_a.get_queue(f"{qname}.billing").get_attributes()
    assert (billing.active_messages, billing.visibility_timeout) == (40, 30)  # untouched, the queue's timeout
    assert plain.get_attributes().active_messages == 40

    # The receiver's own VisibilityTimeout set through its address; what only a queue takes is refused.
    changed = QueueMeta()
    changed.set_visibilitytimeout(9)
    audit.set_attributes(changed)
    assert audit.get_attributes().visibility_timeout == 9
    for refused in (lambda: audit.send_message(Message("x")), lambda: audit.delete()):
        with pytest.raises(MNSServerException) as exc:
            refused()
        assert exc.value.type == "InvalidArgument"
    with pytest.raises(MNSServerException) as exc:
        account_a.get_queue(f"{qname}.nobody").receive_message(0)
    assert exc.value.type == "ReceiverNotExist"
    mns_error(raw_a.request("GET", f"/queues/{qname}.nobody"), 404, "ReceiverNotExist")
    mns_error(raw_a.request("GET", f"/queues/{qname}-missing.audit"), 404, "QueueNotExist")

    listed = raw_a.request("GET", f"/queues/{qname}/receivers")
    assert listed.status == 200, listed.body
    entries = {fields(e)["ReceiverName"]: fields(e) for e in listed.xml().findall(NS + "Receiver")}
    assert set(entries) == {"audit", "billing"}
    assert entries["audit"]["Address"] == f"{qname}.audit"
    assert (entries["audit"]["VisibilityTimeout"], entries["audit"]["InactiveMessages"]) == ("9", "24")
    assert (entries["billing"]["ActiveMessages"], entries["billing"]["VisibilityTimeout"]) == ("40", "30")

    assert raw_a.request("DELETE", f"/queues/{qname}/receivers/audit").status == 204
    with pytest.raises(MNSServerException) as exc:
        audit.get_attributes()
    assert exc.value.type == "ReceiverNotExist"
    mns_error(raw_a.request("GET", f"/queues/{qname}/receivers/audit"), 404, "ReceiverNotExist")
    plain.delete()
    mns_error(raw_a.request("GET", f"/queues/{qname}/receivers"), 404, "QueueNotExist")


def test_create_again_conflicts_and_a_start_time_replays_what_the_queue_holds(
    account_a, raw_a, qname, mns_error, server_clock
):
    plain = text_queue(account_a, qname)
    start = int(server_clock.now()) - 1
    for n in range(5):
        plain.send_message(Message(f"early-{n}"))
    create_receiver(raw_a, qname, "late")
    create_receiver(raw_a, qname, "late", status=204)
    mns_error(
        raw_a.request("PUT", f"/queues/{qname}/receivers/late", receiver_xml(f"<StartTime>{start}</StartTime>")),
        409,
        "ReceiverAlreadyExist",
    )
    created = create_receiver(raw_a, qname, "replay", f"<StartTime>{start}</StartTime>")
    assert created.headers["location"].endswith(f"/queues/{qname}/receivers/replay")
    assert "x-mns-copy-pending" not in created.headers
    plain.send_message(Message("later"))
    late, replay = (account_a.get_queue(f"{qname}.{name}") for name in ("late", "replay"))
    for queue in (late, replay):
        queue.set_encoding(False)
    assert [m.message_body for m in drain(late, 1)] == ["later"]
    assert sorted(m.message_body for m in drain(replay, 6)) == sorted([f"early-{n}" for n in range(5)] + ["later"])
    one = fields(raw_a.request("GET", f"/queues/{qname}/receivers/replay").xml())
    assert (one["StartTime"], one["InactiveMessages"]) == (str(start), "6")
    mns_error(create_receiver(raw_a, qname, "bad.name", status=400), 400, "InvalidReceiverName")
    mns_error(
        raw_a.request("PUT", f"/queues/{qname}/receivers/x", receiver_xml("<StartTime>1</StartTime>")),
        400,
        "InvalidArgument",
    )
    plain.delete()


def test_a_topic_pushing_to_a_queue_reaches_its_receivers(account_a, raw_a, qname, topic):
    plain = text_queue(account_a, qname)
    create_receiver(raw_a, qname, "audit")
    endpoint = TopicHelper.generate_queue_endpoint("cn-hangzhou", ACCOUNT, qname)
    topic.get_subscription("s").subscribe(SubscriptionMeta(endpoint, notify_content_format="SIMPLIFIED"))
    topic.publish_message(TopicMessage("pushed"))
    audit = account_a.get_queue(f"{qname}.audit")
    audit.set_encoding(False)
    assert audit.receive_message(5).message_body == "pushed"
    assert plain.receive_message(5).message_body == "pushed"
    plain.delete()


@pytest.mark.parametrize("address", ["..", ".r", "-q.r", "..r"])
def test_an_address_without_a_queue_name_is_an_invalid_queue_name(raw_a, mns_error, address):
    """As before queues had receivers: a name whose queue part is no queue name answers InvalidQueueName."""
    for method, resource in (("GET", f"/queues/{address}"), ("GET", f"/queues/{address}/messages")):
        mns_error(raw_a.request(method, resource), 400, "InvalidQueueName")


def test_a_bad_receiver_name_of_a_queue_is_an_invalid_receiver_name(raw_a, mns_error, qname):
    mns_error(raw_a.request("GET", f"/queues/{qname}.bad_name"), 400, "InvalidReceiverName")
