from mnsd import errors
from mnsd.call import Call, xml_response
from mnsd.http import HttpResponse
from mnsd.queue_service import VISIBILITY_RANGE
from mnsd.validation import int_in_range
from mnsd.wire import responses


def change_message_visibility(call: Call) -> HttpResponse:
    handle = call.request.query("ReceiptHandle")
    if not handle:
        raise errors.MissingReceiptHandle()
    timeout = call.request.query("VisibilityTimeout")
    if timeout is None:
        raise errors.MissingVisibilityTimeout()
    seconds = int_in_range("VisibilityTimeout", timeout, *VISIBILITY_RANGE, "seconds")
    new_handle, next_visible = call.services.queues.change_visibility(
        call.account_id, call.path("queue"), handle, seconds
    )
    return xml_response(responses.visibility_changed(new_handle, next_visible))
