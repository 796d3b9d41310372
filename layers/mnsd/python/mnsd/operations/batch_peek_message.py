from mnsd.call import Call, xml_response
from mnsd.http import HttpResponse
from mnsd.message_xml import message_node
from mnsd.operations.batch_receive_message import batch_size
from mnsd.xmlcodec import Node


def batch_peek_message(call: Call) -> HttpResponse:
    messages = call.services.queues.peek(call.account_id, call.path("queue"), batch_size(call))
    return xml_response(Node("Messages", [("Message", message_node(m)) for m in messages]))
