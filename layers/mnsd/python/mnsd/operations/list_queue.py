from mnsd.call import Call, xml_response
from mnsd.http import HttpResponse
from mnsd.operations.get_queue_attributes import queue_node
from mnsd.paging import list_request
from mnsd.xmlcodec import Node


def list_queue(call: Call) -> HttpResponse:
    prefix, limit, marker, with_meta = list_request(call.request)
    queues, next_marker = call.services.queues.list_queues(call.account_id, prefix, limit, marker)
    endpoint = call.endpoint()
    entries = []
    for queue in queues:
        url = ("QueueURL", f"{endpoint}/queues/{queue.name}")
        # The live service names each entry beside its URL (the Node SDK reads it); the meta has the name.
        fields = queue_node(queue, None).fields if with_meta else [("QueueName", queue.name)]
        entries.append(Node("Queue", [url, *fields]))
    return xml_response(Node("Queues", [("Queue", e) for e in entries] + [("NextMarker", next_marker)]))
