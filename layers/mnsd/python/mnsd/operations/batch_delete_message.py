from mnsd.http import HttpResponse
from mnsd.request.call import Call, no_content, xml_response
from mnsd.wire import requests, responses


def batch_delete_message(call: Call) -> HttpResponse:
    handles = requests.receipt_handles(call.xml())
    failures = call.services.messages.batch_delete(call.queue(), handles)
    if not failures:
        return no_content()
    return xml_response(*responses.delete_failures(failures))
