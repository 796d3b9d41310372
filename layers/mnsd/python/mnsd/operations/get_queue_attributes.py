from mnsd.call import Call, xml_response
from mnsd.http import HttpResponse
from mnsd.queue_model import Queue, QueueCounts
from mnsd.xmlcodec import Node


def queue_node(queue: Queue, counts: QueueCounts | None) -> Node:
    a = queue.attributes
    fields: list = [
        ("QueueName", queue.name),
        ("CreateTime", queue.create_time),
        ("LastModifyTime", queue.last_modify_time),
        ("DelaySeconds", a.delay_seconds),
        ("MaximumMessageSize", a.maximum_message_size),
        ("MessageRetentionPeriod", a.message_retention_period),
        ("VisibilityTimeout", a.visibility_timeout),
        ("PollingWaitSeconds", a.polling_wait_seconds),
        ("LoggingEnabled", a.logging_enabled),
    ]
    if counts is not None:
        fields += [
            ("ActiveMessages", counts.active),
            ("InactiveMessages", counts.inactive),
            ("DelayMessages", counts.delayed),
        ]
    return Node("Queue", fields)


def get_queue_attributes(call: Call) -> HttpResponse:
    queues = call.services.queues
    queue = queues.get_queue(call.account_id, call.path("queue"))
    return xml_response(queue_node(queue, queues.queue_counts(queue)))
