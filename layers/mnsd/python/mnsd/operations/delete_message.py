from mnsd.calls.call import Call, no_content
from mnsd.ground.http import HttpResponse


def delete_message(call: Call) -> HttpResponse:
    call.services.messages.delete(call.queue(), call.request.query("ReceiptHandle"))
    return no_content()
