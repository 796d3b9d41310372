from mnsd.http import HttpResponse
from mnsd.request.call import Call, xml_response
from mnsd.wire import requests, responses


def publish_message(call: Call) -> HttpResponse:
    message = call.services.topics.publish(call.account_id, call.path("topic"), requests.publish_input(call.xml()))
    return xml_response(responses.published(message), status=201)
