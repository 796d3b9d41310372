"""The request pipeline, written once: the size limit → read what the request asks → authenticate → the account's
limits → the owner → the owner's endpoint ACL → authorize → serve; any refusal on the way rendered as the plane's
error.

A plane's front door (`Door`) gives the steps that differ by plane: what it reads before any key (a route, an
action), its signature check, the call and the permissions it needs, and its error writer. What the pipeline does
itself is the same on every plane: the account's request rate, the owner named by the host
(`HttpRequest.host_account`, else the caller's account), the endpoint's source-address ACL, one authorization per
permission, the request id and version on every answer, and a fault of the server's own answered `InternalError`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from aws_lambda_powertools import Logger

from mnsd.access.permissions import Permission
from mnsd.access.principal import Principal
from mnsd.ground import actor, errors
from mnsd.ground.http import HttpRequest, HttpResponse

if TYPE_CHECKING:
    from mnsd.services import Services

MAX_REQUEST_BYTES = 256 * 1024

logger = Logger(service="mns")


@dataclass(frozen=True)
class Work:
    """A call its door has read and built: the permissions it needs on the owner's resources, and what serves it."""

    permissions: Sequence[Permission]
    serve: Callable[[], HttpResponse]


class Door(Protocol):
    """One plane's front door, made for one request (with its request id and the HostId its errors name)."""

    request: HttpRequest
    version: str  # the `x-mns-version` its answers carry

    def read(self) -> None:
        """What the request asks, from what it says of itself (its route or action): refused before any key is read."""

    def authenticate(self, services: Services) -> Principal | None:
        """Who signed the request, by the plane's signature; None for a public call (served to anyone)."""

    def guards_endpoint(self) -> bool:
        """Whether the owner's endpoint ACL applies (the OpenAPI's endpoint actions manage it: they do not)."""

    def work(self, principal: Principal | None, owner: str, services: Services) -> Work:
        """The call built, the operation it selects, the permissions it needs."""

    def error(self, error: errors.MnsError) -> HttpResponse:
        """An error in the plane's own shape."""

    def described(self) -> Mapping[str, str]:
        """What the log says of the request when the server faults (its route, its action)."""


def run(door: Door, services: Services, request_id: str) -> HttpResponse:
    """The request through every step to its answer, stamped with its request id and version."""
    try:
        response = _served(door, services)
    except errors.MnsError as error:
        response = door.error(error)
    except Exception:
        logger.exception("unhandled error", extra={"request_id": request_id, **door.described()})
        response = door.error(errors.InternalError())
    response.headers.update({"x-mns-request-id": request_id, "x-mns-version": door.version})
    return response


def _served(door: Door, services: Services) -> HttpResponse:
    if len(door.request.body) > MAX_REQUEST_BYTES:
        raise errors.InvalidArgument(f"The request body should not be larger than {MAX_REQUEST_BYTES} bytes.")
    door.read()
    principal = door.authenticate(services)
    if principal is None:
        return door.work(None, "", services).serve()
    services.limits.admit_request(principal.account_id)
    owner = door.request.host_account() or principal.account_id
    if door.guards_endpoint():
        services.endpoints.admit(owner, door.request.source_ip)
    work = door.work(principal, owner, services)
    for permission in work.permissions:
        services.authorizer.authorize(principal, permission, owner)
    with actor.acting(principal.key_id):  # (the operation log's records say which key acted)
        return work.serve()
