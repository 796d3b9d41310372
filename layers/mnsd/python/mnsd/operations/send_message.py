from mnsd.call import Call, xml_response
from mnsd.http import HttpResponse
from mnsd.message_xml import message_input
from mnsd.xmlcodec import Node


def send_message(call: Call) -> HttpResponse:
    (result,) = call.services.queues.send(call.account_id, call.path("queue"), [message_input(call.xml())])
    if result.error is not None:
        raise result.error
    fields = [
        ("MessageId", result.message.message_id),
        ("MessageBodyMD5", result.message.body_md5),
        ("ReceiptHandle", result.receipt_handle),
    ]
    return xml_response(Node("Message", fields), status=201)
