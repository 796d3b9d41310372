from mnsd.http import HttpResponse
from mnsd.queues import addresses
from mnsd.request.call import Call, xml_response
from mnsd.wire import requests, responses


def send_message(call: Call) -> HttpResponse:
    message = requests.sent_message(call.xml())  # (a bad message is answered before a missing queue)
    (result,) = call.services.messages.send(call.own_queue(addresses.SEND), [message])
    if result.error is not None:
        raise result.error
    return xml_response(responses.sent(result), status=201)
