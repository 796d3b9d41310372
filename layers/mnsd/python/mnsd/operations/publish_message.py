from mnsd.http import HttpResponse
from mnsd.request.call import Call


def publish_message(call: Call) -> HttpResponse:
    message = call.services.topics.publish(call.account_id, call.path("topic"), call.plane.publish_input())
    return call.plane.published(message)
