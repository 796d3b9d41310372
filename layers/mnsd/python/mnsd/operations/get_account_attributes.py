from mnsd.calls.call import Call, xml_response
from mnsd.ground.http import HttpResponse
from mnsd.wire import responses


def get_account_attributes(call: Call) -> HttpResponse:
    attributes = call.services.accounts.attributes(call.account_id)
    return xml_response(responses.account_node(attributes.logging_bucket))
