from mnsd.call import Call, no_content
from mnsd.http import HttpResponse
from mnsd.operations.get_account_attributes import ACCOUNT
from mnsd.wire import requests


def set_account_attributes(call: Call) -> HttpResponse:
    bucket = requests.logging_bucket(call.xml())
    if bucket is not None:
        call.services.meta.put(call.account_id, ACCOUNT, "meta", {"logging_bucket": bucket})
    return no_content()
