from mnsd.http import HttpResponse
from mnsd.request.call import Call, xml_response
from mnsd.wire import requests, responses


def batch_receive_message(call: Call) -> HttpResponse:
    count, wait = requests.batch_size(call.request), requests.wait_seconds(call.request)
    received = call.services.messages.receive(call.queue(), count, wait, call.request.received_at)
    return xml_response(responses.received_batch(received))
