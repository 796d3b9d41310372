from mnsd.calls.call import Call, no_content
from mnsd.ground.http import HttpResponse


def delete_receiver(call: Call) -> HttpResponse:
    """`DELETE /queues/{queue}/receivers/{receiver}`: 204, also when there is none (as DeleteQueue)."""
    call.services.receivers.delete(call.account_id, call.path("queue"), call.path("receiver"))
    return no_content()
