from mnsd.http import HttpResponse
from mnsd.request.call import Call
from mnsd.wire import requests


def receive_message(call: Call) -> HttpResponse:
    wait = requests.wait_seconds(call.request)
    (received,) = call.services.messages.receive(call.queue(), 1, wait, call.request.received_at)
    return call.plane.received(received)
