from mnsd.http import HttpResponse
from mnsd.request.call import Call, xml_response
from mnsd.wire import requests, responses


def send_message(call: Call) -> HttpResponse:
    (result,) = call.services.queues.send(call.account_id, call.path("queue"), [requests.sent_message(call.xml())])
    if result.error is not None:
        raise result.error
    return xml_response(responses.sent(result), status=201)
