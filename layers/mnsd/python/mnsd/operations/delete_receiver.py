from mnsd.http import HttpResponse
from mnsd.request.call import Call, no_content


def delete_receiver(call: Call) -> HttpResponse:
    """`DELETE /queues/{queue}/receivers/{receiver}`: 204, also when there is none (as DeleteQueue)."""
    call.services.receivers.delete(call.account_id, call.path("queue"), call.path("receiver"))
    return no_content()
