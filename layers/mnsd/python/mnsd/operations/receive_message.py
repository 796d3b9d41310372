from mnsd.call import Call, xml_response
from mnsd.http import HttpResponse
from mnsd.message_xml import message_node
from mnsd.operations.batch_receive_message import wait_seconds


def receive_message(call: Call) -> HttpResponse:
    (received,) = call.services.queues.receive(call.account_id, call.path("queue"), 1, wait_seconds(call))
    return xml_response(message_node(received.message, received.receipt_handle))
