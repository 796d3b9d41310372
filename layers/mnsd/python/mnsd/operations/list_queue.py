from mnsd.calls.call import Call, account_listing
from mnsd.ground.http import HttpResponse
from mnsd.wire import responses


def list_queue(call: Call) -> HttpResponse:
    return account_listing(call, call.services.queues.list_queues, responses.queue_list)
