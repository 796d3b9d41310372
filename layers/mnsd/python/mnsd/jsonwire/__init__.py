"""The JSON data plane (Alibaba's `SMQProxy` API, version 2026-04-09), in one package: nothing else reads or writes
its JSON.

- `requests`: JSON bodies read into the domain's inputs (`MessageRequest`, `PublishInput`, receipt handles), the
  same inputs `mnsd.wire.requests` reads from XML: the domain checks both alike.
- `responses`: entities and results written as the JSON objects the SMQProxy SDKs read, and errors as JSON.
- `plane`: the two, as the data plane a call is served on (`mnsd.calls.planes`).

The paths, query parameters, signatures and operations are the XML plane's; only the bodies differ. A request is
on this plane when it says so (`x-mns-version: 2026-04-09`, or a JSON `Content-Type`): an `Accept` header alone
says nothing, since Alibaba's Tea gateway sends `Accept: application/json` on XML calls too.
"""

VERSION = "2026-04-09"
