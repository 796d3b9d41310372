from mnsd.calls.call import Call, hinted
from mnsd.http import HttpResponse
from mnsd.wire import requests


def batch_receive_message(call: Call) -> HttpResponse:
    count, wait = requests.batch_size(call.request), requests.wait_seconds(call.request)
    held = call.held_wait()
    received = call.services.messages.receive(call.queue(), count, wait, call.request.received_at, held)
    return hinted(call.plane.received_batch(received), held)
