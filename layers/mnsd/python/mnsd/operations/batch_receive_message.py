from mnsd.calls.call import Call
from mnsd.ground.http import HttpResponse
from mnsd.waiting.receive import receive
from mnsd.wire import requests


def batch_receive_message(call: Call) -> HttpResponse:
    wait, count = requests.wait_seconds(call.request), requests.batch_size(call.request)
    return receive(call, count, wait, call.plane.received_batch)
