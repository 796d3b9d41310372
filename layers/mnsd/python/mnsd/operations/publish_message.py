from mnsd.calls.call import Call
from mnsd.ground.http import HttpResponse


def publish_message(call: Call) -> HttpResponse:
    message = call.services.topics.publish(call.account_id, call.path("topic"), call.plane.publish_input())
    return call.plane.published(message)
