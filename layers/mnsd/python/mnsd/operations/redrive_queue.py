from mnsd.calls.call import Call, xml_response
from mnsd.ground.http import HttpResponse
from mnsd.queues import addresses
from mnsd.wire import responses


def redrive_queue(call: Call) -> HttpResponse:
    """`PUT /queues/{dlq}?redrive=true`: the dead letters back to their source queues (200, how many moved)."""
    moved = call.services.dead_letters.redrive(call.own_queue(addresses.REDRIVE))
    return xml_response(responses.redrive_result(moved))
