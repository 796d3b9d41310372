from mnsd.call import Call, xml_response
from mnsd.http import HttpResponse
from mnsd.wire import responses

ACCOUNT = "account"


def get_account_attributes(call: Call) -> HttpResponse:
    record = call.services.meta.get(call.account_id, ACCOUNT, "meta") or {}
    return xml_response(responses.account_node(record.get("logging_bucket", "")))
