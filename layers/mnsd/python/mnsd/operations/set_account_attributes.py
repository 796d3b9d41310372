from mnsd.calls.call import Call, no_content
from mnsd.ground.http import HttpResponse
from mnsd.wire import requests


def set_account_attributes(call: Call) -> HttpResponse:
    bucket = requests.logging_bucket(call.xml())
    if bucket is not None:
        call.services.accounts.set_logging_bucket(call.account_id, bucket)
    return no_content()
