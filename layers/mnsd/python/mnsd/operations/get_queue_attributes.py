from mnsd.calls.call import Call, xml_response
from mnsd.ground.http import HttpResponse
from mnsd.wire import responses


def get_queue_attributes(call: Call) -> HttpResponse:
    queues = call.services.queues
    queue = call.queue(fresh=True)  # what was set or deleted through another function is answered at once
    held = queues.held_groups(queue)
    return xml_response(
        responses.queue_node(
            queue, queues.queue_counts(queue), held, metrics_default=call.services.settings.metrics_default
        )
    )
