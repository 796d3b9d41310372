from mnsd.calls.call import Call, no_content
from mnsd.ground.http import HttpResponse


def delete_topic(call: Call) -> HttpResponse:
    call.services.topics.delete_topic(call.account_id, call.path("topic"))
    return no_content()
