from mnsd.http import HttpResponse
from mnsd.queues import addresses
from mnsd.request.call import Call, xml_response
from mnsd.wire import requests, responses


def batch_send_message(call: Call) -> HttpResponse:
    messages = requests.sent_messages(call.xml())  # (bad messages are answered before a missing queue)
    results = call.services.messages.send(call.own_queue(addresses.SEND), messages)
    return xml_response(*responses.sent_batch(results))
