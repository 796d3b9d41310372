from mnsd.calls.call import Call, no_content
from mnsd.ground.http import HttpResponse
from mnsd.model.names import is_receiver_address
from mnsd.wire import requests


def set_queue_attributes(call: Call) -> HttpResponse:
    """On a queue's name: its attributes; on a receiver's address: the receiver's own (`ReceiverService`)."""
    name, changes = call.path("queue"), requests.queue_attribute_changes(call.xml())
    if is_receiver_address(name):
        call.services.receivers.set_attributes(call.account_id, name, changes)
    else:
        call.services.queues.set_queue_attributes(call.account_id, name, changes)
    return no_content()
