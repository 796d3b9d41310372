from mnsd.call import Call, xml_response
from mnsd.http import HttpResponse
from mnsd.xmlcodec import Node


def publish_message(call: Call) -> HttpResponse:
    message = call.services.topics.publish(call.account_id, call.path("topic"), call.xml())
    fields = [("MessageId", message.message_id), ("MessageBodyMD5", message.body_md5)]
    return xml_response(Node("Message", fields), status=201)
