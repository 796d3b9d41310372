from mnsd.call import Call, xml_response
from mnsd.http import HttpResponse
from mnsd.message_xml import message_node


def peek_message(call: Call) -> HttpResponse:
    (message,) = call.services.queues.peek(call.account_id, call.path("queue"), 1)
    return xml_response(message_node(message))
