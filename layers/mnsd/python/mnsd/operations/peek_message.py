from mnsd.http import HttpResponse
from mnsd.request.call import Call, xml_response
from mnsd.wire import responses


def peek_message(call: Call) -> HttpResponse:
    (message,) = call.services.messages.peek(call.queue(), 1)
    return xml_response(responses.message_node(message))
