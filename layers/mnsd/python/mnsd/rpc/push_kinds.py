"""The push kinds Alibaba's current API names (`PushType` of Mns-open's Subscribe, 2022-01-19), and what each is here.

Each kind is delivered only where it maps onto a real AWS service; the others are refused, saying why and what to
subscribe instead, never accepted and dropped:

| PushType | Endpoint (Mns-open) | delivered as (the XML plane's Endpoint) | on AWS |
|---|---|---|---|
| `queue` | `{QueueName}` | `acs:mns:{region}:{account}:queues/{QueueName}` | this service's queue |
| `http` | `http(s)://...` | the same | an HTTP POST |
| `email`, `dm` | `{address}` | `mail:directmail:{address}` | SES |
| `alisms`, `dysms` | `{phone}` or `anonymous` | `sms:directsms:{phone}` | SNS SMS |
| `fc` | a Lambda function's ARN | the same | Lambda Invoke (`mnsd.model.cloud_targets`) |
| `eventbus` | an EventBridge bus's ARN | the same | EventBridge PutEvents |
| `mpush`, `kafka`; `fc`, `eventbus` naming Alibaba's (`acs:...`) | refused: `EndpointInvalid` (`model.topics.UNSERVED_KINDS`) | | |

An Endpoint already written in full (`acs:mns:...`, `mail:directmail:...`) is kept as written. Mns-open's Subscribe
(`mnsd.rpc.inputs.endpoint`) writes its Endpoints with this table.

A message's `DM` and `DYSMS` attributes (Java SDK 2.x) are read beside `DirectMail` and `DirectSMS`
(`mnsd.topics.attributes`), so the mail and SMS kinds deliver either generation's messages.
"""

from __future__ import annotations

from mnsd.ground import errors
from mnsd.model.cloud_targets import EVENTBRIDGE, LAMBDA
from mnsd.model.topics import HTTP, MAIL, QUEUE, SMS, UNSERVED_KINDS

DELIVERED = {
    "queue": QUEUE,
    "http": HTTP,
    "email": MAIL,
    "dm": MAIL,
    "alisms": SMS,
    "dysms": SMS,
    "fc": LAMBDA,
    "eventbus": EVENTBRIDGE,
}


# How a bare Endpoint of each kind is written in full; one already in full (it starts so) is kept as written, since
# Mns-open reads it back exactly as it was given.
_IN_FULL = {
    QUEUE: ("acs:", "acs:mns:{region}:{account}:queues/{value}"),
    HTTP: ("http", "{value}"),
    MAIL: ("mail:", "mail:directmail:{value}"),
    SMS: ("sms:", "sms:directsms:{value}"),
}
# Kinds whose Endpoint is only ever given in full (an AWS ARN): anything else names Alibaba Cloud's resource.
_ONLY_IN_FULL = {LAMBDA: "arn:", EVENTBRIDGE: "arn:"}


def endpoint_of(push_type: str, endpoint: str, region: str, account_id: str) -> str:
    """The Endpoint a subscription of `push_type` to `endpoint` (as Mns-open's Subscribe gives them) delivers to,
    written as the XML plane's Subscribe writes it; a kind no AWS service stands behind is refused."""
    kind = DELIVERED.get(push_type.strip().lower())
    if kind is None:
        reason = UNSERVED_KINDS.get(push_type.strip().lower(), f"the kinds served are {', '.join(DELIVERED)}.")
        raise errors.EndpointInvalid(f"Push kind {push_type} is not served: {reason}")
    value = endpoint.strip()
    if kind in _ONLY_IN_FULL:
        if not value.startswith(_ONLY_IN_FULL[kind]):
            reason = UNSERVED_KINDS[push_type.strip().lower()]
            raise errors.EndpointInvalid(f"Push kind {push_type} is not served for {value}: {reason}")
        return value
    full, template = _IN_FULL[kind]
    return value if value.startswith(full) else template.format(region=region, account=account_id, value=value)
