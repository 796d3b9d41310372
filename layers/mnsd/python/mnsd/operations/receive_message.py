from mnsd.call import Call, xml_response
from mnsd.http import HttpResponse
from mnsd.operations.batch_receive_message import wait_seconds
from mnsd.wire import responses


def receive_message(call: Call) -> HttpResponse:
    (received,) = call.services.queues.receive(call.account_id, call.path("queue"), 1, wait_seconds(call))
    return xml_response(responses.received(received))
