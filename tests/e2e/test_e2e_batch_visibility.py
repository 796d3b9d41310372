"""A batch ChangeMessageVisibility end to end, on the XML plane (a `<ChangeVisibilities>` body) and the JSON plane
(`{"ChangeVisibilities": [...]}`, SMQProxy's 2026-04-09), on both engines: 16 handles in one request, 3 of them
stale, change 13 and report the 3 with their codes; the 13 reappear at their new times (on the server's clock), not
at the queue's own visibility timeout. The messages are sent, received and spoiled with the official SDK."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest
from mns.mns_exception import MNSServerException
from mns.queue import Message

from tests.support.raw_http import NS, RawClient, RawResponse, assert_mns_error

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

MNS_NS = "http://mns.aliyuncs.com/doc/v1/"
JSON_HEADERS = {"x-mns-version": "2026-04-09"}


def xml_batch(entries: list[tuple[str, int | None]], default: int) -> str:
    """Handles without a timeout of their own as bare `<ReceiptHandle>`s, the others as `<ChangeVisibility>`."""
    inner = "".join(
        f"<ReceiptHandle>{handle}</ReceiptHandle>"
        if seconds is None
        else f"<ChangeVisibility><ReceiptHandle>{handle}</ReceiptHandle>"
        f"<VisibilityTimeout>{seconds}</VisibilityTimeout></ChangeVisibility>"
        for handle, seconds in entries
    )
    return (
        f'<?xml version="1.0" encoding="UTF-8"?><ChangeVisibilities xmlns="{MNS_NS}">'
        f"<VisibilityTimeout>{default}</VisibilityTimeout>{inner}</ChangeVisibilities>"
    )


def json_batch(entries: list[tuple[str, int | None]], default: int) -> str:
    changes = [h if s is None else {"ReceiptHandle": h, "VisibilityTimeout": s} for h, s in entries]
    return json.dumps({"VisibilityTimeout": default, "ChangeVisibilities": changes})


def change(raw: RawClient, plane: str, queue: str, entries: list[tuple[str, int | None]], default: int) -> RawResponse:
    path = f"/queues/{queue}/messages"
    if plane == "xml":
        return raw.request("PUT", path, xml_batch(entries, default))
    body = json_batch(entries, default)
    return raw.request("PUT", path, body, headers=JSON_HEADERS, content_type="application/json;charset=utf-8")


def entries_of(plane: str, answer: RawResponse) -> list[dict[str, str]]:
    """Each handle's result, in order, as {field: text}."""
    if plane == "json":
        return [{k: str(v) for k, v in entry.items()} for entry in json.loads(answer.body)["ChangeVisibilities"]]
    root = ET.fromstring(answer.body)
    assert root.tag == NS + "ChangeVisibilities"
    return [
        {child.tag[len(NS) :]: child.text or "" for child in entry} for entry in root.findall(NS + "ChangeVisibility")
    ]


def received_ids(queue) -> list[str]:
    try:
        return sorted(m.message_id for m in queue.batch_receive_message(16))
    except MNSServerException as exc:
        assert exc.type == "MessageNotExist"
        return []


@pytest.mark.parametrize("plane", ["xml", "json"])
def test_16_handles_3_stale_13_changed_in_one_request_each_back_at_its_new_time(queue, raw_a, server_clock, plane):
    queue.set_encoding(False)
    queue.batch_send_message([Message(f"m{n:02d}") for n in range(16)])
    received = sorted(queue.batch_receive_message(16), key=lambda m: m.message_body)
    assert len(received) == 16
    handles = [m.receipt_handle for m in received]
    # Three stale: a deleted message's handle, one a change renewed, one altered (its message moved out of the way).
    queue.delete_message(handles[0])
    queue.change_message_visibility(handles[1], 300)
    renewed = queue.change_message_visibility(handles[2], 300).receipt_handle
    handles[2] = renewed[:-4] + ("AAAA" if not renewed.endswith("AAAA") else "BBBB")
    entries: list[tuple[str, int | None]] = [(h, 10 if n < 10 else None) for n, h in enumerate(handles)]

    sent_at = server_clock.now()
    answer = change(raw_a, plane, queue.queue_name, entries, 45)  # the one request
    assert answer.status == 404, answer.body
    assert "x-mns-request-id" in answer.headers
    results = entries_of(plane, answer)
    assert len(results) == 16
    assert [r.get("ErrorCode") for r in results[:3]] == ["MessageNotExist", "MessageNotExist", "ReceiptHandleError"]
    assert [r["ReceiptHandle"] for r in results[:3]] == handles[:3]  # a failure names the handle given
    changed = results[3:]
    assert all("ErrorCode" not in r for r in changed)
    assert all(r["ReceiptHandle"] not in handles for r in changed)  # each a new handle
    times = [int(r["NextVisibleTime"]) / 1000 for r in changed]
    assert all(9 < t - sent_at < 11 for t in times[:7]) and all(44 < t - sent_at < 46 for t in times[7:]), times
    if plane == "json":
        assert json.loads(answer.body)["Code"] == "MessageNotExist"

    def advance_to(at: float) -> None:
        server_clock.advance(max(0.0, at - server_clock.now()))

    soon = sorted(m.message_id for m in received[3:10])
    later = sorted(m.message_id for m in received[10:])
    advance_to(max(times[:7]) - 5)
    assert received_ids(queue) == []
    advance_to(max(times[:7]) + 0.2)
    back = queue.batch_receive_message(16)
    assert sorted(m.message_id for m in back) == soon
    queue.batch_delete_message([m.receipt_handle for m in back])
    advance_to(sent_at + 35)  # past the queue's own 30 s: the 6 still wait for their 45 s
    assert received_ids(queue) == []
    advance_to(max(times[7:]) + 0.2)
    assert received_ids(queue) == later
    with pytest.raises(MNSServerException) as exc:  # the handles the batch replaced are spent
        queue.delete_message(received[12].receipt_handle)
    assert exc.value.type == "MessageNotExist"


@pytest.mark.parametrize("plane", ["xml", "json"])
def test_a_batch_that_changes_every_handle_answers_200_and_the_new_handles_delete(queue, raw_a, plane):
    queue.batch_send_message([Message(f"n{n}") for n in range(3)])
    received = queue.batch_receive_message(16)
    answer = change(raw_a, plane, queue.queue_name, [(m.receipt_handle, None) for m in received], 120)
    assert answer.status == 200, answer.body
    queue.batch_delete_message([r["ReceiptHandle"] for r in entries_of(plane, answer)])
    assert queue.get_attributes().inactive_messages == 0


def test_bad_batches_are_refused_whole_with_mns_codes(queue, raw_a):
    queue.send_message(Message("x"))
    handle = queue.receive_message().receipt_handle
    path = f"/queues/{queue.queue_name}/messages"
    no_timeout = f'<ChangeVisibilities xmlns="{MNS_NS}"><ReceiptHandle>{handle}</ReceiptHandle></ChangeVisibilities>'
    assert_mns_error(raw_a.request("PUT", path, no_timeout), 400, "MissingVisibilityTimeout")
    assert_mns_error(raw_a.request("PUT", path, xml_batch([(handle, None)] * 17, 5)), 400, "InvalidArgument")
    assert_mns_error(raw_a.request("PUT", path, xml_batch([(handle, 43201)], 5)), 400, "InvalidArgument")
    assert_mns_error(raw_a.request("PUT", path, xml_batch([], 5)), 400, "InvalidArgument")
    wrong_root = f'<ReceiptHandles xmlns="{MNS_NS}"><ReceiptHandle>{handle}</ReceiptHandle></ReceiptHandles>'
    assert_mns_error(raw_a.request("PUT", path, wrong_root), 400, "InvalidArgument")
    missing = raw_a.request("PUT", f"/queues/{queue.queue_name}-missing/messages", xml_batch([(handle, None)], 5))
    assert_mns_error(missing, 404, "QueueNotExist")
    queue.delete_message(handle)  # none of the refused batches changed it
