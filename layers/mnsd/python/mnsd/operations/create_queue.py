from mnsd.calls.call import Call, created_or_existing
from mnsd.ground.http import HttpResponse
from mnsd.wire import requests


def create_queue(call: Call) -> HttpResponse:
    name = call.path("queue")
    given = requests.queue_attribute_changes(call.xml_if_any())
    created = call.services.queues.create_queue(call.account_id, name, given)
    return created_or_existing(created, call.location(f"/queues/{name}"))
