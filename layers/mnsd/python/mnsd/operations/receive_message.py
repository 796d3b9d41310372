from mnsd.calls.call import Call, hinted
from mnsd.http import HttpResponse
from mnsd.wire import requests


def receive_message(call: Call) -> HttpResponse:
    wait, held = requests.wait_seconds(call.request), call.held_wait()
    (received,) = call.services.messages.receive(call.queue(), 1, wait, call.request.received_at, held)
    return hinted(call.plane.received(received), held)
