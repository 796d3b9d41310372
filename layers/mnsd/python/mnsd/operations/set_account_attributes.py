from mnsd.call import Call, no_content
from mnsd.http import HttpResponse
from mnsd.storage.catalog import AccountAttributes


def set_account_attributes(call: Call) -> HttpResponse:
    bucket = call.xml().value("LoggingBucket")
    if bucket is not None:
        call.services.catalog.set_account_attributes(call.account_id, AccountAttributes(logging_bucket=bucket))
    return no_content()
