from mnsd.call import Call, no_content
from mnsd.http import HttpResponse


def set_queue_attributes(call: Call) -> HttpResponse:
    call.services.queues.set_queue_attributes(call.account_id, call.path("queue"), call.xml())
    return no_content()
