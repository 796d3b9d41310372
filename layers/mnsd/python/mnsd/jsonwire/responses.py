"""Entities and results written as the JSON the SMQProxy SDKs (2026-04-09) read: field names as their models name
them, times and counts as JSON integers, user properties as `{name: {"DataType", "StringValue"|"BinaryValue"}}`."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from mnsd.ground import errors
from mnsd.ground.http import HttpResponse
from mnsd.model.messages import Message, Property
from mnsd.model.topics import TopicMessage
from mnsd.queues.messages import Received, SendResult, VisibilityResult

Fields = dict[str, Any]
CONTENT_TYPE = "application/json;charset=utf-8"


def encode(fields: Fields) -> bytes:
    return json.dumps(fields, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def json_response(fields: Fields, status: int = 200) -> HttpResponse:
    return HttpResponse(status, encode(fields), {"Content-Type": CONTENT_TYPE})


def properties(items: tuple[Property, ...]) -> Fields:
    """Properties as the SDK's `UserPropertiesValue` map: a BINARY one's (base64) value in `BinaryValue`."""
    return {
        p.name: {"DataType": p.type, "BinaryValue" if p.type.upper() == "BINARY" else "StringValue": p.value}
        for p in items
    }


def message_node(message: Message, receipt_handle: str | None = None) -> Fields:
    """A received (with handle and next visible time) or peeked (without) message."""
    fields: Fields = {
        "MessageId": message.message_id,
        "MessageBody": message.body,
        "MessageBodyMD5": message.body_md5,
        "EnqueueTime": message.enqueue_time,
        "FirstDequeueTime": message.first_dequeue_time,
        "DequeueCount": message.dequeue_count,
        "Priority": message.priority,
    }
    if receipt_handle is not None:
        fields.update(ReceiptHandle=receipt_handle, NextVisibleTime=message.visible_at)
    if message.message_group_id:
        fields["MessageGroupId"] = message.message_group_id
    if message.user_properties:
        fields["UserProperties"] = properties(message.user_properties)
    if message.system_properties:
        fields["SystemProperties"] = properties(message.system_properties)
    return fields


def received(result: Received) -> Fields:
    """ReceiveMessage: the message with its receipt handle and next visible time."""
    return message_node(result.message, result.receipt_handle)


def received_batch(results: Sequence[Received]) -> Fields:
    """BatchReceiveMessage: `{"Messages": [...]}`."""
    return {"Messages": [received(r) for r in results]}


def peeked_batch(messages: Sequence[Message]) -> Fields:
    """BatchPeekMessage: `{"Messages": [...]}`."""
    return {"Messages": [message_node(m) for m in messages]}


def sent(result: SendResult) -> Fields:
    """SendMessage (the receipt handle only for a delayed message; the group of a FIFO queue's message)."""
    fields: Fields = {"MessageId": result.message.message_id, "MessageBodyMD5": result.message.body_md5}
    if result.receipt_handle is not None:
        fields["ReceiptHandle"] = result.receipt_handle
    if result.message.fifo:
        fields["MessageGroupId"] = result.message.message_group_id
    return fields


def sent_batch(results: Sequence[SendResult]) -> Fields:
    """BatchSendMessage: each message's result, or its `ErrorCode` and `ErrorMessage`; when any failed, the first
    failure's code as the answer's `Code` (what a Tea client raises). The status: `mnsd.calls.planes.Plane`."""
    entries: list[Fields] = [
        {"ErrorCode": r.error.code, "ErrorMessage": r.error.message} if r.error is not None else sent(r)
        for r in results
    ]
    failed = [r.error for r in results if r.error is not None]
    if not failed:
        return {"Messages": entries}
    summary = f"{len(failed)} of {len(results)} messages were not sent; each one's error is in Messages."
    return {"Code": failed[0].code, "Message": summary, "Messages": entries}


def _handle_error(handle: str, error: errors.MnsError) -> Fields:
    """A receipt handle a batch could not use: BatchDeleteMessage's error entry."""
    return {"ErrorCode": error.code, "ErrorMessage": error.message, "ReceiptHandle": handle}


def delete_failures(failures: Sequence[tuple[str, errors.MnsError]]) -> Fields:
    """BatchDeleteMessage's failures, and the first failure's code as the answer's `Code`. The status:
    `mnsd.calls.planes.Plane`."""
    entries = [_handle_error(h, e) for h, e in failures]
    summary = f"{len(failures)} receipt handles were not deleted; each one's error is in Errors."
    return {"Code": failures[0][1].code, "Message": summary, "Errors": entries}


def visibility_changed(receipt_handle: str, next_visible_time: int) -> Fields:
    """ChangeMessageVisibility."""
    return {"ReceiptHandle": receipt_handle, "NextVisibleTime": next_visible_time}


def visibility_batch(results: Sequence[VisibilityResult]) -> Fields:
    """A batch ChangeMessageVisibility: `{"ChangeVisibilities": [...]}`, an entry per handle in the order given, each
    what ChangeMessageVisibility answers or a failed handle's error entry; when any failed, the first failure's code
    as the answer's `Code`. The status: `mnsd.calls.planes.Plane`."""
    entries = [
        _handle_error(r.given, r.error)
        if r.error is not None
        else visibility_changed(r.receipt_handle, r.next_visible_time)
        for r in results
    ]
    failed = [r.error for r in results if r.error is not None]
    if not failed:
        return {"ChangeVisibilities": entries}
    summary = (
        f"{len(failed)} of {len(results)} receipt handles were not changed; each one's error is in ChangeVisibilities."
    )
    return {"Code": failed[0].code, "Message": summary, "ChangeVisibilities": entries}


def published(message: TopicMessage) -> Fields:
    """PublishMessage."""
    return {"MessageId": message.message_id, "MessageBodyMD5": message.body_md5}


def error(error: errors.MnsError, request_id: str, host_id: str) -> bytes:
    """An error, as JSON (`mnsd.request.door.error_response`): the XML `<Error>`'s four fields."""
    return encode({"Code": error.code, "Message": error.message, "RequestId": request_id, "HostId": host_id})
