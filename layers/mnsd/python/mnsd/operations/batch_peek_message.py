from mnsd.call import Call, xml_response
from mnsd.http import HttpResponse
from mnsd.operations.batch_receive_message import batch_size
from mnsd.wire import responses


def batch_peek_message(call: Call) -> HttpResponse:
    messages = call.services.queues.peek(call.account_id, call.path("queue"), batch_size(call))
    return xml_response(responses.peeked_batch(messages))
