from mnsd.http import HttpResponse
from mnsd.request.call import Call, no_content
from mnsd.wire import requests


def create_queue(call: Call) -> HttpResponse:
    name = call.path("queue")
    created = call.services.queues.create_queue(
        call.account_id, name, requests.queue_attribute_changes(call.xml_if_any())
    )
    location = {"Location": f"{call.endpoint()}/queues/{name}"}
    return HttpResponse(201, b"", location) if created else no_content(location)
