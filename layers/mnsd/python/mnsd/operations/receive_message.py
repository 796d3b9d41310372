from mnsd.calls.call import Call
from mnsd.ground.http import HttpResponse
from mnsd.waiting.receive import Render, receive
from mnsd.wire import requests


def receive_message(call: Call) -> HttpResponse:
    wait, render = single_receive(call)
    return receive(call, 1, wait, render)


def single_receive(call: Call) -> tuple[int | None, Render]:
    """What a ReceiveMessage asks (its wait) and how it answers a claim (its one message): also read when the wait
    tier coalesced it with others (`mnsd.request.coalesced`)."""
    return requests.wait_seconds(call.request), lambda received: call.plane.received(received[0])
