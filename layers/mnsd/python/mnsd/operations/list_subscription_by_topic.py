from mnsd.calls.call import Call, xml_response
from mnsd.calls.paging import list_request
from mnsd.ground.http import HttpResponse
from mnsd.wire import responses


def list_subscription_by_topic(call: Call) -> HttpResponse:
    prefix, limit, marker, with_meta = list_request(call.request)
    topic = call.path("topic")
    found, next_marker = call.services.topics.list_subscriptions(call.account_id, topic, prefix, limit, marker)
    base = f"{call.endpoint()}/topics/{topic}/subscriptions"
    return xml_response(responses.subscription_list(found, next_marker, base, with_meta))
