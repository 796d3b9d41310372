from mnsd.call import Call, no_content
from mnsd.http import HttpResponse


def set_topic_attributes(call: Call) -> HttpResponse:
    call.services.topics.set_topic_attributes(call.account_id, call.path("topic"), call.xml())
    return no_content()
