from mnsd.call import Call, no_content
from mnsd.http import HttpResponse


def delete_message(call: Call) -> HttpResponse:
    call.services.queues.delete(call.account_id, call.path("queue"), call.request.query("ReceiptHandle"))
    return no_content()
