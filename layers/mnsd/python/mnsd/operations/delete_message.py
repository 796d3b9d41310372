from mnsd.request.call import Call, no_content
from mnsd.request.http import HttpResponse


def delete_message(call: Call) -> HttpResponse:
    call.services.queues.delete(call.account_id, call.path("queue"), call.request.query("ReceiptHandle"))
    return no_content()
