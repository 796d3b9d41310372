from mnsd.calls.call import Call
from mnsd.ground.http import HttpResponse
from mnsd.wire import requests


def batch_peek_message(call: Call) -> HttpResponse:
    count = requests.batch_size(call.request)
    messages = call.services.messages.peek(call.queue(), count)
    return call.plane.peeked_batch(messages)
