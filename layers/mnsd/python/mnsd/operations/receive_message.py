from mnsd.call import Call, xml_response
from mnsd.http import HttpResponse
from mnsd.message_xml import message_node
from mnsd.operations.batch_receive_message import wait_seconds


def receive_message(call: Call) -> HttpResponse:
    queues = call.services.queues
    (received,) = queues.receive(call.account_id, call.path("queue"), 1, wait_seconds(call), call.request.received_at)
    return xml_response(message_node(received.message, received.receipt_handle))
