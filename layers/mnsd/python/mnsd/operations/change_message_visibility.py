from mnsd.calls.call import Call
from mnsd.calls.queries import visibility_change
from mnsd.ground.http import HttpResponse


def change_message_visibility(call: Call) -> HttpResponse:
    handle, seconds = visibility_change(call.request)
    new_handle, next_visible = call.services.messages.change_visibility(call.queue(), handle, seconds)
    return call.plane.visibility_changed(new_handle, next_visible)
