from mnsd.http import HttpResponse
from mnsd.request.call import Call, xml_response
from mnsd.wire import requests, responses


def batch_peek_message(call: Call) -> HttpResponse:
    count = requests.batch_size(call.request)
    messages = call.services.messages.peek(call.queue(), count)
    return xml_response(responses.peeked_batch(messages))
