from mnsd.http import HttpResponse
from mnsd.request.call import Call, no_content


def delete_queue(call: Call) -> HttpResponse:
    call.services.queues.delete_queue(call.account_id, call.path("queue"))
    return no_content()
