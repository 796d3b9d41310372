from mnsd.http import HttpResponse
from mnsd.request.call import Call, xml_response
from mnsd.wire import requests, responses


def batch_peek_message(call: Call) -> HttpResponse:
    messages = call.services.queues.peek(call.account_id, call.path("queue"), requests.batch_size(call.request))
    return xml_response(responses.peeked_batch(messages))
