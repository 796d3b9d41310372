from mnsd.call import Call, no_content
from mnsd.http import HttpResponse


def set_subscription_attributes(call: Call) -> HttpResponse:
    topics = call.services.topics
    topics.set_subscription_attributes(call.account_id, call.path("topic"), call.path("subscription"), call.xml())
    return no_content()
