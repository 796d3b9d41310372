from mnsd.call import Call, xml_response
from mnsd.http import HttpResponse
from mnsd.xmlcodec import Node


def get_account_attributes(call: Call) -> HttpResponse:
    attributes = call.services.accounts.attributes(call.account_id)
    return xml_response(Node("Account", [("LoggingBucket", attributes.logging_bucket)]))
