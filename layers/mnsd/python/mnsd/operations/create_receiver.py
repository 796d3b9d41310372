from mnsd.calls.call import Call, created_or_existing
from mnsd.ground.http import HttpResponse
from mnsd.wire import receivers


def create_receiver(call: Call) -> HttpResponse:
    """`PUT /queues/{queue}/receivers/{receiver}`: 201 created, 204 an identical one exists (both with
    `x-mns-copy-pending: true` while messages before its creation are still to be copied: PUT it again)."""
    queue, name = call.path("queue"), call.path("receiver")
    created, copying = call.services.receivers.create(
        call.account_id, queue, name, receivers.receiver_input(call.xml_if_any())
    )
    headers = call.location(f"/queues/{queue}/receivers/{name}")
    if copying:
        headers["x-mns-copy-pending"] = "true"
    return created_or_existing(created, headers)
