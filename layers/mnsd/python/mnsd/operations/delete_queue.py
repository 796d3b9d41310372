from mnsd.http import HttpResponse
from mnsd.queues import addresses
from mnsd.request.call import Call, no_content


def delete_queue(call: Call) -> HttpResponse:
    name = call.path("queue")
    addresses.refuse_receiver(name, addresses.DELETE)
    call.services.queues.delete_queue(call.account_id, name)
    return no_content()
