from mnsd.calls.call import Call
from mnsd.ground.http import HttpResponse
from mnsd.queues import addresses


def batch_send_message(call: Call) -> HttpResponse:
    messages = call.plane.sent_messages()  # (bad messages are answered before a missing queue)
    results = call.services.messages.send(call.own_queue(addresses.SEND), messages)
    return call.plane.sent_batch(results)
