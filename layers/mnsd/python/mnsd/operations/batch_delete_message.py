from mnsd import errors
from mnsd.call import Call, no_content, xml_response
from mnsd.http import HttpResponse
from mnsd.xmlcodec import Node


def batch_delete_message(call: Call) -> HttpResponse:
    handles = [node.text for node in call.xml().all("ReceiptHandle")]
    failures = call.services.queues.batch_delete(call.account_id, call.path("queue"), handles)
    if not failures:
        return no_content()
    nodes = [
        ("Error", Node("Error", [("ErrorCode", e.code), ("ErrorMessage", e.message), ("ReceiptHandle", h)]))
        for h, e in failures
    ]
    only_bad_handles = all(isinstance(e, errors.ReceiptHandleError) for _, e in failures)
    return xml_response(Node("Errors", nodes), status=400 if only_bad_handles else 404)
