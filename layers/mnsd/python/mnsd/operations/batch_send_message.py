from mnsd.http import HttpResponse
from mnsd.request.call import Call, xml_response
from mnsd.wire import requests, responses


def batch_send_message(call: Call) -> HttpResponse:
    results = call.services.queues.send(call.account_id, call.path("queue"), requests.sent_messages(call.xml()))
    return xml_response(*responses.sent_batch(results))
