from mnsd.http import HttpResponse
from mnsd.request.call import Call, xml_response
from mnsd.request.paging import list_request
from mnsd.wire import responses


def list_topic(call: Call) -> HttpResponse:
    prefix, limit, marker, with_meta = list_request(call.request)
    topics, next_marker = call.services.topics.list_topics(call.account_id, prefix, limit, marker)
    return xml_response(
        responses.topic_list(
            topics, next_marker, call.endpoint(), with_meta, metrics_default=call.services.settings.metrics_default
        )
    )
