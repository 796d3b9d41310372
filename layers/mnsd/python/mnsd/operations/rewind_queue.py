from mnsd.calls.call import Call, no_content
from mnsd.ground.http import HttpResponse
from mnsd.wire import requests


def rewind_queue(call: Call) -> HttpResponse:
    """`PUT /queues/{name}?rewindtime=T`: messages enqueued since T receivable again (204)."""
    since = requests.rewind_time(call.request)
    call.services.dead_letters.rewind(call.queue(), since)
    return no_content()
