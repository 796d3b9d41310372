from mnsd.calls.call import Call, created_or_existing
from mnsd.ground.http import HttpResponse
from mnsd.wire import requests


def create_topic(call: Call) -> HttpResponse:
    name = call.path("topic")
    given = requests.topic_attribute_changes(call.xml_if_any())
    created = call.services.topics.create_topic(call.account_id, name, given)
    return created_or_existing(created, call.location(f"/topics/{name}"))
