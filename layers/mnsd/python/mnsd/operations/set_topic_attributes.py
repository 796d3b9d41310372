from mnsd.calls.call import Call, no_content
from mnsd.ground.http import HttpResponse
from mnsd.wire import requests


def set_topic_attributes(call: Call) -> HttpResponse:
    call.services.topics.set_topic_attributes(
        call.account_id, call.path("topic"), requests.topic_attribute_changes(call.xml())
    )
    return no_content()
