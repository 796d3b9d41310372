from mnsd.call import Call, xml_response
from mnsd.http import HttpResponse
from mnsd.xmlcodec import Node


def get_subscription_attributes(call: Call) -> HttpResponse:
    s = call.services.topics.get_subscription(call.account_id, call.path("topic"), call.path("subscription"))
    a = s.attributes
    fields = [
        ("SubscriptionName", s.name),
        ("Subscriber", s.account_id),
        ("TopicOwner", s.account_id),
        ("TopicName", s.topic_name),
        ("Endpoint", a.endpoint),
        ("NotifyStrategy", a.notify_strategy),
        ("NotifyContentFormat", a.notify_content_format),
        ("FilterTag", a.filter_tag or None),
        ("CreateTime", s.create_time),
        ("LastModifyTime", s.last_modify_time),
    ]
    return xml_response(Node("Subscription", fields))
