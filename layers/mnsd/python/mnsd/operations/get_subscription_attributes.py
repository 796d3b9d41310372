from mnsd.calls.call import Call, xml_response
from mnsd.ground.http import HttpResponse
from mnsd.wire import responses


def get_subscription_attributes(call: Call) -> HttpResponse:
    s = call.services.topics.get_subscription(call.account_id, call.path("topic"), call.path("subscription"))
    return xml_response(responses.subscription_node(s))
