from mnsd.calls.call import Call
from mnsd.calls.queries import batch_size, wait_seconds
from mnsd.ground.http import HttpResponse
from mnsd.operations.receive_message import receive


def batch_receive_message(call: Call) -> HttpResponse:
    wait, count = wait_seconds(call.request), batch_size(call.request)  # (checked in this order)
    return receive(call, count, wait, call.plane.received_batch)
