from mnsd.http import HttpResponse
from mnsd.request.call import Call, no_content
from mnsd.wire import requests


def subscribe(call: Call) -> HttpResponse:
    topic, name = call.path("topic"), call.path("subscription")
    created = call.services.topics.subscribe(call.account_id, topic, name, requests.subscription_input(call.xml()))
    location = {"Location": f"{call.endpoint()}/topics/{topic}/subscriptions/{name}"}
    return HttpResponse(201, b"", location) if created else no_content(location)
