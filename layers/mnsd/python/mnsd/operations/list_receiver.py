from mnsd.calls.call import Call, xml_response
from mnsd.ground.http import HttpResponse
from mnsd.wire import receivers


def list_receiver(call: Call) -> HttpResponse:
    """`GET /queues/{queue}/receivers`: every receiver of the queue with its counts."""
    states = call.services.receivers.receivers_of(call.account_id, call.path("queue"))
    return xml_response(receivers.receiver_list(states))
