from mnsd.calls.call import Call
from mnsd.ground.http import HttpResponse
from mnsd.wire import requests


def change_message_visibility(call: Call) -> HttpResponse:
    handle, seconds = requests.visibility_change(call.request)
    new_handle, next_visible = call.services.messages.change_visibility(call.queue(), handle, seconds)
    return call.plane.visibility_changed(new_handle, next_visible)
