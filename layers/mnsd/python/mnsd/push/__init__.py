"""Push delivery: a published message's first attempt to each subscription, the retries the Step Functions
workflow schedules, and the pushes given up (dead-lettered or dropped).

- `fanout`: which subscriptions receive a message; `first_attempt`: one subscription's first attempt
  (a failure starts the retry workflow); `retry_worker`: one task of the push queue (a retry or a drop);
  `dead_letters`: a push given up; `records`: the operation-log records and counters they emit.
- `delivery`: one attempt to one endpoint (queue, HTTP, mail, SMS, Lambda, EventBridge), its `outcome`; `http`,
  `signing`: the HTTP POST and its signature (which addresses it may reach: `mnsd.model.egress`); `cloud_delivery`:
  Lambda's Invoke and EventBridge's PutEvents and what their refusals mean (which ARNs: `mnsd.model.cloud_targets`).
- `workflow`: the retry state machine; `stepfunctions`: the typed port to Step Functions.
- `dispatch`: the local runtime's fan-out threads, one lane per subscription (the Lambda handlers: `mnsd.entry.push`).
"""
