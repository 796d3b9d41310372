from mnsd.calls.call import Call, no_content
from mnsd.ground.http import HttpResponse


def unsubscribe(call: Call) -> HttpResponse:
    call.services.topics.unsubscribe(call.account_id, call.path("topic"), call.path("subscription"))
    return no_content()
