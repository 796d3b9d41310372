from mnsd.calls.call import Call
from mnsd.ground.http import HttpResponse


def peek_message(call: Call) -> HttpResponse:
    (message,) = call.services.messages.peek(call.queue(), 1)
    return call.plane.peeked(message)
