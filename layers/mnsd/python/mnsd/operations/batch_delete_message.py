from mnsd.calls.call import Call, no_content
from mnsd.ground.http import HttpResponse


def batch_delete_message(call: Call) -> HttpResponse:
    handles = call.plane.receipt_handles()
    failures = call.services.messages.batch_delete(call.queue(), handles)
    if not failures:
        return no_content()
    return call.plane.delete_failures(failures)
