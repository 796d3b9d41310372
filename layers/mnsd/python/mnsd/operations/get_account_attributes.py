from mnsd.call import Call, xml_response
from mnsd.http import HttpResponse
from mnsd.xmlcodec import Node

ACCOUNT = "account"


def get_account_attributes(call: Call) -> HttpResponse:
    record = call.services.meta.get(call.account_id, ACCOUNT, "meta") or {}
    return xml_response(Node("Account", [("LoggingBucket", record.get("logging_bucket", ""))]))
