from mnsd.calls.call import Call, xml_response
from mnsd.ground.http import HttpResponse
from mnsd.wire import receivers


def get_receiver_attributes(call: Call) -> HttpResponse:
    """`GET /queues/{queue}/receivers/{receiver}`."""
    state = call.services.receivers.get(call.account_id, call.path("queue"), call.path("receiver"))
    return xml_response(receivers.receiver_node(state))
