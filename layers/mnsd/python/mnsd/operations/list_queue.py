from mnsd.http import HttpResponse
from mnsd.request.call import Call, xml_response
from mnsd.request.paging import list_request
from mnsd.wire import responses


def list_queue(call: Call) -> HttpResponse:
    prefix, limit, marker, with_meta = list_request(call.request)
    queues, next_marker = call.services.queues.list_queues(call.account_id, prefix, limit, marker)
    return xml_response(
        responses.queue_list(
            queues, next_marker, call.endpoint(), with_meta, metrics_default=call.services.settings.metrics_default
        )
    )
