from mnsd.calls.call import Call, created_or_existing
from mnsd.ground.http import HttpResponse
from mnsd.wire import requests


def subscribe(call: Call) -> HttpResponse:
    topic, name = call.path("topic"), call.path("subscription")
    created = call.services.topics.subscribe(call.account_id, topic, name, requests.subscription_input(call.xml()))
    return created_or_existing(created, call.location(f"/topics/{topic}/subscriptions/{name}"))
