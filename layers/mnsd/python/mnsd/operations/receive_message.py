from mnsd.calls.call import Call
from mnsd.ground.http import HttpResponse
from mnsd.waiting.receive import receive
from mnsd.wire import requests


def receive_message(call: Call) -> HttpResponse:
    return receive(call, 1, requests.wait_seconds(call.request), lambda received: call.plane.received(received[0]))
