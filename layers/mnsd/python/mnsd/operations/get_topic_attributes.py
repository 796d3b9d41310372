from mnsd.calls.call import Call, xml_response
from mnsd.ground.http import HttpResponse
from mnsd.wire import responses


def get_topic_attributes(call: Call) -> HttpResponse:
    topics = call.services.topics
    topic = topics.get_topic(call.account_id, call.path("topic"))
    return xml_response(
        responses.topic_node(topic, topics.message_count(topic), metrics_default=call.services.settings.metrics_default)
    )
