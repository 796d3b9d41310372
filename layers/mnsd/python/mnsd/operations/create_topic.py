from mnsd.http import HttpResponse
from mnsd.request.call import Call, no_content
from mnsd.wire import requests


def create_topic(call: Call) -> HttpResponse:
    name = call.path("topic")
    created = call.services.topics.create_topic(
        call.account_id, name, requests.topic_attribute_changes(call.xml_if_any())
    )
    location = {"Location": f"{call.endpoint()}/topics/{name}"}
    return HttpResponse(201, b"", location) if created else no_content(location)
