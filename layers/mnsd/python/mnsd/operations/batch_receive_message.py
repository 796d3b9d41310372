from mnsd.call import Call, xml_response
from mnsd.http import HttpResponse
from mnsd.queue_service import MAX_BATCH, MAX_WAIT_SECONDS
from mnsd.validation import int_in_range
from mnsd.wire import responses


def wait_seconds(call: Call) -> int | None:
    text = call.request.query("waitseconds")
    return None if text is None else int_in_range("waitseconds", text, 0, MAX_WAIT_SECONDS, "seconds")


def batch_size(call: Call) -> int:
    return int_in_range("numOfMessages", call.request.query("numOfMessages"), 1, MAX_BATCH)


def batch_receive_message(call: Call) -> HttpResponse:
    received = call.services.queues.receive(call.account_id, call.path("queue"), batch_size(call), wait_seconds(call))
    return xml_response(responses.received_batch(received))
