from mnsd import errors
from mnsd.call import Call, xml_response
from mnsd.http import HttpResponse
from mnsd.message_xml import message_input
from mnsd.queue_service import MAX_BATCH, MAX_BATCH_BYTES
from mnsd.xmlcodec import Node


def batch_send_message(call: Call) -> HttpResponse:
    entries = call.xml().children
    if any(entry.tag != "Message" for entry in entries):
        raise errors.InvalidArgument(
            "The XML you provided did not validate against our published schema, cause by Element Messages."
        )
    if not 1 <= len(entries) <= MAX_BATCH:
        raise errors.InvalidArgument(f"The count of message should between 1 and {MAX_BATCH}.")
    inputs = [message_input(entry) for entry in entries]
    if sum(len(m.body.encode("utf-8")) for m in inputs) > MAX_BATCH_BYTES:
        raise errors.InvalidArgument(f"The total size of messages should not be larger than {MAX_BATCH_BYTES} bytes.")
    results = call.services.queues.send(call.account_id, call.path("queue"), inputs)
    nodes = [
        Node("Message", [("ErrorCode", r.error.code), ("ErrorMessage", r.error.message)])
        if r.error is not None
        else Node("Message", [("MessageId", r.message.message_id), ("MessageBodyMD5", r.message.body_md5)])
        for r in results
    ]
    status = 500 if any(r.error is not None for r in results) else 201
    return xml_response(Node("Messages", [("Message", n) for n in nodes]), status=status)
