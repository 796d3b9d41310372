"""A function's role, enforced on its boto3 clients: every call is turned into what IAM authorizes
(`local_runtime.roles.calls`) and decided under the role's statements (`local_runtime.roles.policy`); a call the
role does not allow fails as AWS fails it, with the service's own AccessDenied error (botocore raises it from the
answer a `before-call` hook gives instead of sending the request).

A call that cannot be decided (an unmapped operation, an unknown condition operator) raises `Undecidable`, which
no `except ClientError` catches; every decision is also appended to the log `MNS_ROLES_LOG` names (JSON lines), which
the tests read back: which functions made which calls, and whether any was refused.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from local_runtime.roles.calls import Place, UnmappedCall, requests_of
from local_runtime.roles.policy import Request, UnknownCondition, decide
from local_runtime.roles.template import Role

LOG = "MNS_ROLES_LOG"
# The services whose errors botocore reads as `AccessDenied` (query and REST-XML protocols); the JSON ones answer
# `AccessDeniedException`.
QUERY_PROTOCOL = {"sqs", "s3", "sns", "cloudwatch", "ses"}
_log_lock = threading.Lock()


class Undecidable(Exception):
    """A call whose authorization cannot be decided here: it must fail the test, not pass or be caught."""


class Guard:
    """The role `role` of the function `name`, enforced on the clients `attach`ed to it."""

    def __init__(self, name: str, role: Role, place: Place, log: str | None = None) -> None:
        self.name = name
        self.role = role
        self.place = place
        self.log = log if log is not None else os.environ.get(LOG)

    def refusal(self, service: str, operation: str, params: dict[str, Any]) -> Request | None:
        """The first authorization of the call its role refuses, or None."""
        try:
            requests = requests_of(self.place, service, operation, params)
            refused = next((r for r in requests if not decide(self.role.statements, r).allowed), None)
        except (UnmappedCall, UnknownCondition) as error:
            self._write({"function": self.name, "call": f"{service}.{operation}", "undecidable": str(error)})
            raise Undecidable(f"{self.name}: {service}.{operation}: {error}") from error
        self._write(
            {
                "function": self.name,
                "call": f"{service}.{operation}",
                "refused": refused.describe() if refused else None,
            }
        )
        return refused

    def attach(self, client: Any) -> Any:
        client.meta.events.register("before-parameter-build", self._before_parameters)
        client.meta.events.register("before-call", self._before_call)
        return client

    def _before_parameters(self, params: dict[str, Any], model: Any, context: dict[str, Any], **kwargs: Any) -> None:
        refused = self.refusal(model.service_model.service_name, model.name, params)
        if refused is not None:
            context["mns_refused"] = refused

    def _before_call(self, model: Any, context: dict[str, Any], **kwargs: Any) -> Any:
        refused: Request | None = context.get("mns_refused")
        if refused is None:
            return None
        from botocore.awsrequest import AWSResponse

        service = model.service_model.service_name
        code = "AccessDenied" if service in QUERY_PROTOCOL else "AccessDeniedException"
        role = self.role.path.split("/")[-2] if "/" in self.role.path else self.role.path
        message = (
            f"User: arn:{self.place.partition}:sts::{self.place.account}:assumed-role/{role}/{self.name} is not "
            f"authorized to perform: {refused.action} on resource: {refused.resource} because no identity-based "
            f"policy allows the {refused.action} action"
        )
        parsed = {"Error": {"Code": code, "Message": message}, "ResponseMetadata": {"HTTPStatusCode": 400}}
        return AWSResponse("", 400, {}, None), parsed

    def _write(self, record: dict[str, Any]) -> None:
        if not self.log:
            return
        with _log_lock, open(self.log, "a") as out:
            out.write(json.dumps(record) + "\n")


@contextmanager
def every_client(guard: Guard) -> Iterator[None]:
    """Within the block, every botocore client made (boto3's, or a botocore session's) is `guard`ed: a function whose
    code makes its own clients, run alone in the process (its handler invoked cold)."""
    import botocore.session

    original = botocore.session.Session.create_client

    def create_client(session: Any, *args: Any, **kwargs: Any) -> Any:
        return guard.attach(original(session, *args, **kwargs))

    botocore.session.Session.create_client = create_client
    try:
        yield
    finally:
        botocore.session.Session.create_client = original


def read_log(path: str) -> list[dict[str, Any]]:
    try:
        with open(path) as records:
            return [json.loads(line) for line in records if line.strip()]
    except FileNotFoundError:
        return []
