"""The OpenAPI's JSON answers: `{RequestId, Code, Status, Message, Success, Data}` on success, and on failure the HTTP
status of the error with `{RequestId, HostId, Code, Message, Recommend, Success}` (the body Alibaba's SDKs and the
Terraform provider read an error's `Code` from)."""

from __future__ import annotations

import json
from typing import Any

from mnsd.ground import errors
from mnsd.ground.http import HttpResponse

JSON = "application/json;charset=utf-8"
# What the XML plane's refusals are called on this plane, where the OpenAPI names them otherwise.
_RENAMED: dict[type[errors.MnsError], tuple[str, int]] = {
    errors.AccessDenied: (
        "Forbidden.RAM",
        403,
    ),
}
# The Data of an answer that returns no resource (CreateQueue, SetQueueAttributes, ...), as the SDK's models read it.
DONE: dict[str, Any] = {"Code": 200, "Message": "operation success", "Success": True}


def _response(status: int, body: dict[str, Any], request_id: str) -> HttpResponse:
    text = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return HttpResponse(status, text, {"Content-Type": JSON, "x-acs-request-id": request_id})


def success(request_id: str, data: Any = None) -> HttpResponse:
    body: dict[str, Any] = {
        "RequestId": request_id,
        "Code": 200,
        "Status": "Success",  # (Alibaba's examples of every action; `Code` is the number 200)
        "Message": "operation success",
        "Success": True,
    }
    if data is not None:
        body["Data"] = data
    return _response(200, body, request_id)


def failure(error: errors.MnsError, request_id: str, host_id: str) -> HttpResponse:
    code, status = _RENAMED.get(type(error), (error.code, error.status))
    body = {
        "RequestId": request_id,
        "HostId": host_id,
        "Code": code,
        "Message": error.message,
        "Recommend": "",
        "Success": False,
    }
    return _response(status, body, request_id)
