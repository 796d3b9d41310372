from mnsd.http import HttpResponse
from mnsd.request.call import Call, no_content
from mnsd.wire import requests


def set_queue_attributes(call: Call) -> HttpResponse:
    call.services.queues.set_queue_attributes(
        call.account_id, call.path("queue"), requests.queue_attribute_changes(call.xml())
    )
    return no_content()
