from mnsd.calls.call import Call, account_listing
from mnsd.ground.http import HttpResponse
from mnsd.wire import responses


def list_topic(call: Call) -> HttpResponse:
    return account_listing(call, call.services.topics.list_topics, responses.topic_list)
