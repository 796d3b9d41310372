"""The one request pipeline (`mnsd.pipeline.steps.run`), over a door that records what it is asked and services that
record what they admit: the steps in their order, a refusal stopping every later step and answered by the door, the
owner named by the host, the endpoint ACL where the door guards it, a public call served to anyone, and a fault of
the server's own answered `InternalError` in the door's shape; every answer stamped with its request id."""

from __future__ import annotations

from collections.abc import Mapping
from types import SimpleNamespace

import pytest

from mnsd.access.permissions import Permission
from mnsd.access.principal import Principal
from mnsd.ground import errors
from mnsd.ground.http import HttpRequest, HttpResponse
from mnsd.pipeline import steps
from mnsd.pipeline.steps import Work

CALLER = Principal("1000000000000001", "KEY")
OWNER = "2000000000000002"
READ = Permission("mns:GetQueueAttributes", "acs:mns:r:2000000000000002:/queues/q")
WRITE = Permission("mns:SetQueueAttributes", "acs:mns:r:2000000000000002:/queues/q")


class RecordingDoor:
    version = "9999-01-01"

    def __init__(self, log: list[str], *, public: bool = False, guards: bool = True, host: str = "", body: bytes = b""):
        self.log, self.public, self.guards = log, public, guards
        self.request = HttpRequest("POST", "/", "", {"host": host} if host else {}, body, source_ip="192.0.2.1")
        self.fails: dict[str, BaseException] = {}

    def _step(self, name: str) -> None:
        self.log.append(name)
        if name in self.fails:
            raise self.fails[name]

    def read(self) -> None:
        self._step("read")

    def authenticate(self, services: object) -> Principal | None:
        self._step("authenticate")
        return None if self.public else CALLER

    def guards_endpoint(self) -> bool:
        return self.guards

    def work(self, principal: Principal | None, owner: str, services: object) -> Work:
        self._step(f"work for {owner or 'anyone'}")

        def serve() -> HttpResponse:
            self._step("serve")
            return HttpResponse(200, b"served")

        return Work([READ, WRITE] if principal else [], serve)

    def error(self, error: errors.MnsError) -> HttpResponse:
        self.log.append(f"error {error.code}")
        return HttpResponse(error.status, error.code.encode())

    def described(self) -> Mapping[str, str]:
        return {"route": "test"}


def services(log: list[str], refuse: str | None = None) -> SimpleNamespace:
    def step(name: str, refusal: errors.MnsError):
        def record(*args: object) -> None:
            log.append(f"{name} {' '.join(str(getattr(a, 'action', a)) for a in args if a is not CALLER)}".strip())
            if refuse == name:
                raise refusal

        return record

    return SimpleNamespace(
        limits=SimpleNamespace(admit_request=step("limits", errors.QpsLimitExceeded())),
        endpoints=SimpleNamespace(admit=step("endpoint", errors.AccessDenied())),
        authorizer=SimpleNamespace(authorize=step("authorize", errors.AccessDenied())),
    )


def run(door: RecordingDoor, log: list[str], refuse: str | None = None) -> HttpResponse:
    return steps.run(door, services(log, refuse), "RID")  # type: ignore[arg-type]


def test_the_steps_in_their_order_the_owner_named_by_the_host():
    log: list[str] = []
    response = run(RecordingDoor(log, host=f"{OWNER}.mns.localhost:8080"), log)
    assert (response.status, response.body) == (200, b"served")
    assert log == [
        "read",
        "authenticate",
        f"limits {CALLER.account_id}",
        f"endpoint {OWNER} 192.0.2.1",
        f"work for {OWNER}",
        f"authorize mns:GetQueueAttributes {OWNER}",
        f"authorize mns:SetQueueAttributes {OWNER}",
        "serve",
    ]
    assert response.headers == {"x-mns-request-id": "RID", "x-mns-version": "9999-01-01"}


def test_without_an_account_in_the_host_the_owner_is_the_caller():
    log: list[str] = []
    run(RecordingDoor(log, host="127.0.0.1:8080"), log)
    assert f"work for {CALLER.account_id}" in log


@pytest.mark.parametrize(
    ("refused_at", "code"),
    [
        ("read", "InvalidRequestURL"),
        ("authenticate", "SignatureDoesNotMatch"),
        ("limits", "QpsLimitExceeded"),
        ("endpoint", "AccessDenied"),
        ("authorize", "AccessDenied"),
    ],
)
def test_a_refusal_stops_every_later_step_and_is_the_doors_error(refused_at, code):
    log: list[str] = []
    door = RecordingDoor(log)
    door_refusals = {"read": errors.InvalidRequestURL(), "authenticate": errors.SignatureDoesNotMatch()}
    door.fails = {refused_at: door_refusals[refused_at]} if refused_at in door_refusals else {}
    response = run(door, log, refuse=refused_at)
    assert response.body == code.encode() and response.headers["x-mns-request-id"] == "RID"
    assert "serve" not in log
    stopped = next(i for i, entry in enumerate(log) if entry.startswith(refused_at))
    assert log[stopped + 1 :] == [f"error {code}"]


def test_a_body_over_the_limit_is_refused_before_anything_is_read():
    log: list[str] = []
    response = run(RecordingDoor(log, body=b"x" * (steps.MAX_REQUEST_BYTES + 1)), log)
    assert response.status == 400 and log == ["error InvalidArgument"]


def test_a_door_that_does_not_guard_the_endpoint_skips_its_acl():
    log: list[str] = []
    run(RecordingDoor(log, guards=False), log, refuse="endpoint")
    assert not any(entry.startswith("endpoint") for entry in log) and log[-1] == "serve"


def test_a_public_call_is_served_to_anyone_without_limits_acl_or_authorization():
    log: list[str] = []
    response = run(RecordingDoor(log, public=True), log, refuse="limits")
    assert response.status == 200 and log == ["read", "authenticate", "work for anyone", "serve"]


def test_a_fault_of_the_servers_own_is_internal_error_in_the_doors_shape():
    log: list[str] = []
    door = RecordingDoor(log)
    door.fails = {"serve": KeyError("a bug")}
    response = run(door, log)
    assert (response.status, response.body) == (500, b"InternalError")
    assert response.headers["x-mns-request-id"] == "RID"
