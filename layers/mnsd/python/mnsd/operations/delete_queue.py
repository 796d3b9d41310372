from mnsd.calls.call import Call, no_content
from mnsd.ground.http import HttpResponse
from mnsd.queues import addresses


def delete_queue(call: Call) -> HttpResponse:
    name = call.path("queue")
    addresses.refuse_receiver(name, addresses.DELETE)
    call.services.queues.delete_queue(call.account_id, name)
    return no_content()
