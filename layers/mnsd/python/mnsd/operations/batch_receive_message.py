from mnsd.http import HttpResponse
from mnsd.request.call import Call
from mnsd.wire import requests


def batch_receive_message(call: Call) -> HttpResponse:
    count, wait = requests.batch_size(call.request), requests.wait_seconds(call.request)
    received = call.services.messages.receive(call.queue(), count, wait, call.request.received_at)
    return call.plane.received_batch(received)
