from mnsd.calls.call import Call
from mnsd.ground.http import HttpResponse
from mnsd.queues import addresses


def send_message(call: Call) -> HttpResponse:
    message = call.plane.sent_message()  # (a bad message is answered before a missing queue)
    (result,) = call.services.messages.send(call.own_queue(addresses.SEND), [message])
    if result.error is not None:
        raise result.error
    return call.plane.sent(result)
