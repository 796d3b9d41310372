from mnsd.http import HttpResponse
from mnsd.request.call import Call, no_content
from mnsd.wire import requests


def rewind_queue(call: Call) -> HttpResponse:
    """`PUT /queues/{name}?rewindtime=T`: messages enqueued since T receivable again (204)."""
    call.services.queues.rewind(call.account_id, call.path("queue"), requests.rewind_time(call.request))
    return no_content()
