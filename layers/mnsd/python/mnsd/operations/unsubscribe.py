from mnsd.http import HttpResponse
from mnsd.request.call import Call, no_content


def unsubscribe(call: Call) -> HttpResponse:
    call.services.topics.unsubscribe(call.account_id, call.path("topic"), call.path("subscription"))
    return no_content()
