from mnsd.calls.call import Call
from mnsd.ground.http import HttpResponse


def batch_change_message_visibility(call: Call) -> HttpResponse:
    changes = call.plane.visibility_changes()
    results = call.services.messages.batch_change_visibility(call.queue(), changes)
    return call.plane.visibility_batch(results)
