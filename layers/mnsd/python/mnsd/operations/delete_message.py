from mnsd.http import HttpResponse
from mnsd.request.call import Call, no_content


def delete_message(call: Call) -> HttpResponse:
    call.services.messages.delete(call.queue(), call.request.query("ReceiptHandle"))
    return no_content()
