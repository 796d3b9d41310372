from mnsd.call import Call, xml_response
from mnsd.http import HttpResponse
from mnsd.topic_model import TOPIC_RETENTION_SECONDS, Topic
from mnsd.xmlcodec import Node


def topic_node(topic: Topic, message_count: int | None) -> Node:
    fields: list = [
        ("TopicName", topic.name),
        ("CreateTime", topic.create_time),
        ("LastModifyTime", topic.last_modify_time),
        ("MaximumMessageSize", topic.attributes.maximum_message_size),
        ("MessageRetentionPeriod", TOPIC_RETENTION_SECONDS),
    ]
    if message_count is not None:
        fields.append(("MessageCount", message_count))
    fields.append(("LoggingEnabled", topic.attributes.logging_enabled))
    return Node("Topic", fields)


def get_topic_attributes(call: Call) -> HttpResponse:
    topics = call.services.topics
    topic = topics.get_topic(call.account_id, call.path("topic"))
    return xml_response(topic_node(topic, topics.message_count(topic)))
