from mnsd.calls.call import Call, no_content
from mnsd.ground.http import HttpResponse
from mnsd.wire import requests


def set_subscription_attributes(call: Call) -> HttpResponse:
    changes = requests.subscription_changes(call.xml())
    topics = call.services.topics
    topics.set_subscription_attributes(call.account_id, call.path("topic"), call.path("subscription"), changes)
    return no_content()
