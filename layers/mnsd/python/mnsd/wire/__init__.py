"""The MNS wire format, in one package: nothing else reads or writes XML.

- `codec`: the XML codec (parse request bodies, encode response elements).
- `requests`: request bodies read into the domain's inputs (`QueueAttributeChanges`, `MessageInput`,
  `PublishInput`, `SubscriptionInput`, ...).
- `responses`: entities and results written as response elements (attributes, messages, lists, batch
  results, errors).
- `plane`: what the XML data plane adds to those to serve a message call (`mnsd.calls.planes`); the JSON data
  plane (SMQProxy 2026-04-09) is `mnsd.jsonwire`, beside this package.

The rules for values (ranges, choices, required elements, sizes) are the domain's: the inputs carry
what the request gave, and the domain checks them where MNS does, so the error a request gets is the
one MNS gives first. Sent messages and query parameters (batch size, wait, visibility timeout) are
checked as they are read, before their queue is looked up; attributes, subscriptions and publishes
after their queue, topic or subscription is found. The domain never imports this package.
"""
