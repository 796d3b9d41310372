from mnsd.calls.call import Call
from mnsd.calls.queries import batch_size
from mnsd.ground.http import HttpResponse


def batch_peek_message(call: Call) -> HttpResponse:
    count = batch_size(call.request)
    messages = call.services.messages.peek(call.queue(), count)
    return call.plane.peeked_batch(messages)
