from mnsd.http import HttpResponse
from mnsd.request.call import Call


def peek_message(call: Call) -> HttpResponse:
    (message,) = call.services.messages.peek(call.queue(), 1)
    return call.plane.peeked(message)
