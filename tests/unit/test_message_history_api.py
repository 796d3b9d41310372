"""A message's history through the API (`GET /queues/{q}/messages/{id}/history`) on the embedded engine: every event
of a message's life with its time, kind, key and dequeue count; the three refusals; RAM action GetMessageHistory on
the queue's messages resource, allowed and refused. (Both engines, over the local server: `tests/e2e`.)"""

from __future__ import annotations

from mnsd.log.oplog import RETENTION_SECONDS
from mnsd.storage.ids import new_message_id
from tests.support.message_history import events, life, told
from tests.unit.access_calls import ROOT, World, policy, resource

LOGGING = (
    "<Queue><LoggingEnabled>True</LoggingEnabled><VisibilityTimeout>30</VisibilityTimeout>"
    "<RewindPeriod>600</RewindPeriod><DlqPolicy><Enabled>True</Enabled><DeadLetterTargetQueue>dead</DeadLetterTargetQueue>"
    "<MaxReceiveCount>2</MaxReceiveCount></DlqPolicy></Queue>"
)
CONSUMER = "CONSUMER"


def logged(world: World) -> None:
    """What the local runtime's change reader does in the background: the events recorded so far, to the log."""
    found, upto = world.services.storage.messages.changes()
    world.services.queue_events().handle(found)
    world.services.storage.messages.forget_changes(upto)


def received(world: World, key) -> tuple[str, str]:
    answer = world.call(key, "GET", "/queues/hist/messages?waitseconds=0")
    assert answer.status == 200, answer.body
    return answer.value("MessageId") or "", answer.value("ReceiptHandle") or ""


def a_life(world: World) -> str:
    """A message sent by the root key, received by CONSUMER, given back, received again, deleted (kept: rewind is on),
    rewound, and dead-lettered by the receive after (its third, past MaxReceiveCount 2); its id."""
    consumer = world.key(CONSUMER, None)
    assert world.call(ROOT, "PUT", "/queues/dead").status == 201
    assert world.call(ROOT, "PUT", "/queues/hist", body=LOGGING).status == 201
    sent_at = int(world.clock.now())
    sent = world.call(ROOT, "POST", "/queues/hist/messages", body="<Message><MessageBody>m</MessageBody></Message>")
    message_id = sent.value("MessageId") or ""
    world.clock.sleep(1)
    _, handle = received(world, consumer)
    given_back = world.call(consumer, "PUT", f"/queues/hist/messages?ReceiptHandle={handle}&VisibilityTimeout=0")
    assert given_back.status == 200
    world.clock.sleep(1)
    again, handle = received(world, consumer)
    assert again == message_id
    assert world.call(consumer, "DELETE", f"/queues/hist/messages?ReceiptHandle={handle}").status == 204
    world.clock.sleep(1)
    assert world.call(ROOT, "PUT", f"/queues/hist?rewindtime={sent_at}").status == 204
    world.clock.sleep(1)
    assert world.call(consumer, "GET", "/queues/hist/messages?waitseconds=0").code == "MessageNotExist"  # moved
    logged(world)
    return message_id


def test_a_messages_history_has_every_event_of_its_life_with_its_time_kind_key_and_count():
    world = World()
    started_ms = int(world.clock.now() * 1000)
    message_id = a_life(world)

    answer = world.call(ROOT, "GET", f"/queues/hist/messages/{message_id}/history")

    assert answer.status == 200, answer.body
    assert (answer.value("QueueName"), answer.value("MessageId")) == ("hist", message_id)
    assert (answer.value("LoggingEnabled"), answer.value("Truncated")) == ("True", "False")
    assert answer.value("LogRetentionPeriod") == str(RETENTION_SECONDS)
    found = events(answer.body)
    assert told(found) == life(ROOT.key_id, CONSUMER)
    receive, given_back = found[1], found[2]
    assert int(receive["NextVisibleTime"]) == int(receive["Time"]) + 30_000  # its visibility timeout
    assert int(given_back["NextVisibleTime"]) == int(given_back["Time"])  # given back: receivable at once
    times = [int(e["Time"]) for e in found]
    assert times == sorted(times) and times[0] == started_ms and times[-1] == started_ms + 4000
    assert found[-1]["TargetQueue"] == "dead"
    letter = world.call(ROOT, "GET", "/queues/dead/messages?peekonly=true")
    assert letter.value("MessageId") == found[-1]["TargetMessageId"]


def test_a_queue_that_does_not_log_answers_logging_not_enabled():
    world = World()  # its queue `q` does not log
    sent = world.call(ROOT, "POST", "/queues/q/messages", body="<Message><MessageBody>m</MessageBody></Message>")
    logged(world)

    answer = world.call(ROOT, "GET", f"/queues/q/messages/{sent.value('MessageId')}/history")

    assert (answer.status, answer.code) == (409, "LoggingNotEnabled")
    assert "LoggingEnabled is False" in answer.message and answer.request_id


def test_a_history_past_the_logs_window_has_aged_out_and_an_unknown_message_is_not_in_the_window():
    world = World()
    message_id = a_life(world)
    assert world.call(ROOT, "GET", f"/queues/hist/messages/{message_id}/history").status == 200

    unknown = world.call(ROOT, "GET", f"/queues/hist/messages/{new_message_id(int(world.clock.now() * 1000))}/history")
    assert (unknown.status, unknown.code) == (404, "MessageHistoryNotExist")
    assert "holds no event of message" in unknown.message
    malformed = world.call(ROOT, "GET", "/queues/hist/messages/not-an-id/history")
    assert (malformed.status, malformed.code) == (404, "MessageHistoryNotExist")
    too_long = world.call(ROOT, "GET", f"/queues/hist/messages/{'A' * 129}/history")
    assert (too_long.status, too_long.code) == (400, "InvalidArgument")

    world.clock.sleep(RETENTION_SECONDS + 10)  # (the log's records are read past their TTL, unswept)
    aged = world.call(ROOT, "GET", f"/queues/hist/messages/{message_id}/history")
    assert (aged.status, aged.code) == (404, "MessageHistoryExpired")
    assert "aged out" in aged.message
    world.services.storage.sweep_expired(int(world.clock.now() * 1000))  # and swept
    swept = world.call(ROOT, "GET", f"/queues/hist/messages/{message_id}/history")
    assert (swept.status, swept.code) == (404, "MessageHistoryExpired")


def test_get_message_history_is_allowed_on_the_queues_messages_resource_and_refused_elsewhere():
    world = World()
    message_id = a_life(world)
    target = f"/queues/hist/messages/{message_id}/history"
    reader = world.key("READER", policy(("Allow", ["mns:GetMessageHistory"], [resource("/queues/hist/messages")])))
    receiver = world.key("RECEIVER", policy(("Allow", ["mns:ReceiveMessage"], [resource("/queues/hist/messages")])))
    elsewhere = world.key("ELSEWHERE", policy(("Allow", ["mns:GetMessageHistory"], [resource("/queues/q/messages")])))

    allowed = world.call(reader, "GET", target)
    assert allowed.status == 200 and len(events(allowed.body)) == 7
    for key in (receiver, elsewhere):
        refused = world.call(key, "GET", target)
        assert (refused.status, refused.code) == (403, "AccessDenied")
        assert refused.message == (
            f"You are not authorized to do action mns:GetMessageHistory on resource {resource('/queues/hist/messages')}."
        )
