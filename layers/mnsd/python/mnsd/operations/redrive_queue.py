from mnsd.http import HttpResponse
from mnsd.request.call import Call, xml_response
from mnsd.wire import responses


def redrive_queue(call: Call) -> HttpResponse:
    """`PUT /queues/{dlq}?redrive=true`: the dead letters back to their source queues (200, how many moved)."""
    moved = call.services.queues.redrive(call.account_id, call.path("queue"))
    return xml_response(responses.redrive_result(moved))
