from mnsd.call import Call, xml_response
from mnsd.http import HttpResponse
from mnsd.operations.get_topic_attributes import topic_node
from mnsd.paging import list_request
from mnsd.xmlcodec import Node


def list_topic(call: Call) -> HttpResponse:
    prefix, limit, marker, with_meta = list_request(call.request)
    topics, next_marker = call.services.topics.list_topics(call.account_id, prefix, limit, marker)
    endpoint = call.endpoint()
    entries = []
    for topic in topics:
        url = ("TopicURL", f"{endpoint}/topics/{topic.name}")
        # The live service names each entry beside its URL (the Node SDK reads it); the meta has the name.
        fields = topic_node(topic, None).fields if with_meta else [("TopicName", topic.name)]
        entries.append(Node("Topic", [url, *fields]))
    return xml_response(Node("Topics", [("Topic", e) for e in entries] + [("NextMarker", next_marker)]))
