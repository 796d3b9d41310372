"""An extension for the console's chart of a queue's last hour: `GET /queues/{q}?metrics=minutely` answers, per
minute, the counts and gauges of the queue (or receiver, by its address) from the services' `MinuteHistory`, for
the signing tenant only. Authorized as GetQueueAttributes (`mnsd.access.permissions`)."""

from __future__ import annotations

from mnsd.calls.call import Call, xml_response
from mnsd.ground.http import HttpResponse
from mnsd.metrics.minutes import MinuteWindow
from mnsd.wire import responses


def queue_minutes(call: Call) -> HttpResponse:
    queue = call.queue()
    window = MinuteWindow.ending(call.services.clock.now())
    return xml_response(responses.minute_metrics(queue.name, call.services.minutes.last_hour(queue, window)))
