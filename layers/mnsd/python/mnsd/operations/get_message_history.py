"""An extension: `GET /queues/{q}/messages/{id}/history` and `GET /topics/{t}/messages/{id}/history` answer what the
operation log recorded of one message (`mnsd.log.history`), for the signing tenant only; RAM action
`mns:GetMessageHistory` on the message operations' resource (`/queues/{q}/messages`, `/topics/{t}/messages`)."""

from __future__ import annotations

from mnsd.calls.call import Call, xml_response
from mnsd.ground import errors
from mnsd.ground.http import HttpResponse
from mnsd.log.history import AgedOut, History, NotLogging, message_history
from mnsd.log.oplog import RETENTION_SECONDS
from mnsd.storage.ids import message_id_time
from mnsd.wire import responses
from mnsd.wire.responses import Fields

_MAX_ID = 128  # longer than any message id this service makes


def _answer(call: Call, kind: str, name: str, logging_enabled: bool, fields: Fields) -> HttpResponse:
    message_id = call.path("message")
    if len(message_id) > _MAX_ID:
        raise errors.InvalidArgument(f"The MessageId should be at most {_MAX_ID} characters.")
    now_ms = int(call.services.clock.now() * 1000)
    answer = message_history(
        call.services.storage.log, call.account_id, kind, name, message_id, logging_enabled, now_ms,
        message_id_time(message_id),
    )  # fmt: skip
    if isinstance(answer, History):
        return xml_response(responses.message_history(fields, message_id, answer))
    days = RETENTION_SECONDS // 86_400
    if isinstance(answer, NotLogging):
        raise errors.LoggingNotEnabled(
            f"The {kind} {name} does not log its messages' events (LoggingEnabled is False): no history of {message_id}."
        )
    if isinstance(answer, AgedOut):
        raise errors.MessageHistoryExpired(
            f"Message {message_id} was sent before the operation log's window (the last {days} days): "
            "its history aged out."
        )
    raise errors.MessageHistoryNotExist(
        f"The operation log of {kind} {name} holds no event of message {message_id} in the last {days} days."
    )


def queue_message_history(call: Call) -> HttpResponse:
    queue = call.queue()
    fields: Fields = [("QueueName", queue.name)]
    return _answer(call, "queue", queue.name, queue.attributes.logging_enabled, fields)


def topic_message_history(call: Call) -> HttpResponse:
    topic = call.services.topics.get_topic(call.account_id, call.path("topic"))
    return _answer(call, "topic", topic.name, topic.attributes.logging_enabled, [("TopicName", topic.name)])
