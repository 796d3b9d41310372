"""One authenticated API call, as operations see it."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from mnsd.access.principal import Principal
from mnsd.calls.paging import list_request
from mnsd.calls.planes import Plane, plane_of
from mnsd.ground import errors
from mnsd.ground.http import HttpRequest, HttpResponse
from mnsd.wire import codec as xmlcodec
from mnsd.wire.plane import parsed_body, xml_response

if TYPE_CHECKING:
    from mnsd.model.queues import Queue
    from mnsd.services import Services

Listed = TypeVar("Listed")


def _raised(error: errors.MnsError) -> HttpResponse:
    raise error


@dataclass
class Call:
    request: HttpRequest
    principal: Principal | None  # who calls (None only on public routes)
    owner: str  # the account whose resources the call is on: the host's, else the caller's
    services: Services
    # The answer an error gets on this call (its door's, `mnsd.pipeline.steps.Door.error`: its request id and plane), for an operation
    # that answers with one it does not raise (a receive the wait tier holds: `mnsd.operations.receive_message`).
    error_answer: Callable[[errors.MnsError], HttpResponse] = field(default=_raised, repr=False)
    _xml: xmlcodec.Element | None = field(default=None, repr=False)
    _plane: Plane[Any, Any] | None = field(default=None, repr=False)

    @property
    def account_id(self) -> str:
        """The account the call works in (the resources' owner)."""
        return self.owner

    def path(self, name: str) -> str:
        return self.request.path_params[name]

    def queue(self, fresh: bool = False) -> Queue:
        """The queue, or the queue's receiver, the path's `{queue}` names: resolved here, once (`mnsd.queues.addresses`;
        `fresh`: its record as stored now, not as this container cached it)."""
        return self.services.addresses.resolve(self.account_id, self.path("queue"), fresh)

    def own_queue(self, instead: str) -> Queue:
        """The queue the path's `{queue}` names, where only a queue's own name goes (a receiver's address refused,
        saying what to do `instead`)."""
        return self.services.addresses.queue(self.account_id, self.path("queue"), instead)

    def xml(self) -> xmlcodec.Element:
        """The request body, parsed once."""
        if self._xml is None:
            self._xml = parsed_body(self.request.body)
        return self._xml

    @property
    def plane(self) -> Plane[Any, Any]:
        """The data plane the call is on (XML or JSON, `mnsd.calls.planes`): a message operation's body and answer."""
        if self._plane is None:
            self._plane = plane_of(self.request)
        return self._plane

    def xml_if_any(self) -> xmlcodec.Element | None:
        return self.xml() if self.request.body.strip() else None

    def endpoint(self) -> str:
        """The base URL the client called (for QueueURL and Location)."""
        host = self.request.header("host") or f"{self.account_id}.mns.{self.services.settings.region}.aliyuncs.com"
        scheme = self.request.header("x-forwarded-proto") or "http"
        return f"{scheme}://{host}"

    def location(self, path: str) -> dict[str, str]:
        """The `Location` header of a resource at `path` (`/queues/{name}`) of the endpoint called."""
        return {"Location": f"{self.endpoint()}{path}"}


def no_content(headers: dict[str, str] | None = None) -> HttpResponse:
    return HttpResponse(204, b"", headers or {})


def created_or_existing(created: bool, headers: dict[str, str]) -> HttpResponse:
    """The answer to a PUT that makes a resource: 201 when it made it, 204 when an identical one was there already."""
    return HttpResponse(201, b"", headers) if created else no_content(headers)


def account_listing(
    call: Call,
    list_page: Callable[[str, str, int, str | None], tuple[Sequence[Listed], str | None]],
    render: Callable[..., xmlcodec.Node],
) -> HttpResponse:
    """ListQueue and ListTopic: the page of the account's queues or topics the list headers ask for (`list_page`, as
    the service lists them), rendered (`render`: as `mnsd.wire.responses.queue_list`) with the stack's
    `metrics_default`."""
    prefix, limit, marker, with_meta = list_request(call.request)
    found, next_marker = list_page(call.account_id, prefix, limit, marker)
    metrics_default = call.services.settings.metrics_default
    return xml_response(render(found, next_marker, call.endpoint(), with_meta, metrics_default=metrics_default))
