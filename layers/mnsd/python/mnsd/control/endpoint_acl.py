"""An account's endpoint: whether it serves the account's requests, and from which source addresses (the OpenAPI's
EnableEndpoint, DisableEndpoint, GetEndpointAttribute, AuthorizeEndpointAcl, RevokeEndpointAcl).

Kept with the account's settings in the catalog. While the endpoint is disabled, or while its allow-list names any
CIDR block, a request on the account's resources (on either plane) from an address outside it is refused; the
endpoint operations themselves stay open to the account's keys, so an account can never lock itself out. One
endpoint type exists, `public` (the API's host): no VPC endpoint is deployed, so `vpc` is refused.

The settings are cached per container for `cache_seconds` (a change made through another container counts at most
that late; this container's own at once), so enforcing them costs no read per request.
"""

from __future__ import annotations

import ipaddress
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, replace

from mnsd.control.catalog import AccountAttributes, Catalog
from mnsd.ground import errors

PUBLIC = "public"
# Refused by the endpoint (`AccessDenied` on either plane, the OpenAPI's too: not a RAM refusal).
EndpointRefused = type("EndpointRefused", (errors.AccessDenied,), {})
ALLOW = "allow"
MAX_ENTRIES = 50


@dataclass(frozen=True)
class AclEntry:
    cidr: str
    strategy: str
    create_time: int  # ms


@dataclass(frozen=True)
class EndpointState:
    enabled: bool
    acl: tuple[AclEntry, ...]

    def admits(self, source: str | None) -> bool:
        if not self.enabled:
            return False
        if not self.acl:
            return True
        address = _address(source)
        return address is not None and any(address in ipaddress.ip_network(e.cidr, strict=False) for e in self.acl)


def _address(source: str | None) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        address = ipaddress.ip_address(source or "")
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def endpoint_type(text: str | None) -> str:
    if (text or "").strip().lower() != PUBLIC:
        raise errors.InvalidArgument("The EndpointType should be public (no VPC endpoint is deployed).")
    return PUBLIC


def acl_strategy(text: str | None) -> str:
    if (text or "").strip().lower() != ALLOW:
        raise errors.InvalidArgument("The AclStrategy should be allow.")
    return ALLOW


def cidr_blocks(text: str | None) -> list[str]:
    """A CidrList as given (comma-separated), each block checked; kept as written (Terraform reads it back)."""
    blocks = [b.strip() for b in (text or "").split(",") if b.strip()]
    if not blocks:
        raise errors.InvalidArgument("The CidrList should name one or more CIDR blocks.")
    for block in blocks:
        try:
            ipaddress.ip_network(block, strict=False)
        except ValueError as exc:
            raise errors.InvalidArgument(f"The CIDR block {block!r} is invalid.") from exc
    return blocks


def _state(attributes: AccountAttributes) -> EndpointState:
    entries = json.loads(attributes.endpoint_acl) if attributes.endpoint_acl else []
    acl = tuple(AclEntry(e["Cidr"], e["AclStrategy"], int(e["CreateTime"])) for e in entries)
    return EndpointState(attributes.endpoint_enabled, acl)


def _acl_document(acl: list[AclEntry]) -> str:
    return json.dumps([{"Cidr": e.cidr, "AclStrategy": e.strategy, "CreateTime": e.create_time} for e in acl])


class EndpointService:
    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self._lock = threading.Lock()
        self._cached: dict[str, tuple[EndpointState, float]] = {}

    def state(self, account_id: str, fresh: bool = False) -> EndpointState:
        now = self.catalog.clock.now()
        with self._lock:
            cached = None if fresh else self._cached.get(account_id)
        if cached is not None and now - cached[1] < self.catalog.cache_seconds:
            return cached[0]
        state = _state(self.catalog.account_attributes(account_id))
        with self._lock:
            if len(self._cached) >= 10_000:
                self._cached.clear()
            self._cached[account_id] = (state, now)
        return state

    def admit(self, account_id: str, source: str | None) -> None:
        """Refuses (403 AccessDenied) a request on the account's resources from an address its endpoint refuses."""
        state = self.state(account_id)
        if not state.admits(source):
            why = "is disabled" if not state.enabled else f"does not allow the source address {source}"
            raise EndpointRefused(f"The account's public endpoint {why}.")

    def set_enabled(self, account_id: str, enabled: bool) -> None:
        self._change(account_id, lambda a: replace(a, endpoint_enabled=enabled))

    def authorize(self, account_id: str, blocks: list[str]) -> None:
        now_ms = int(self.catalog.clock.now() * 1000)

        def added(attributes: AccountAttributes) -> AccountAttributes:
            acl = list(_state(attributes).acl)
            known = {e.cidr for e in acl}
            acl += [AclEntry(b, ALLOW, now_ms) for b in dict.fromkeys(blocks) if b not in known]
            if len(acl) > MAX_ENTRIES:
                raise errors.InvalidArgument(f"An endpoint's ACL holds at most {MAX_ENTRIES} CIDR blocks.")
            return replace(attributes, endpoint_acl=_acl_document(acl))

        self._change(account_id, added)

    def revoke(self, account_id: str, blocks: list[str]) -> None:
        def removed(attributes: AccountAttributes) -> AccountAttributes:
            acl = [e for e in _state(attributes).acl if e.cidr not in blocks]
            return replace(attributes, endpoint_acl=_acl_document(acl) if acl else "")

        self._change(account_id, removed)

    def _change(self, account_id: str, change: Callable[[AccountAttributes], AccountAttributes]) -> None:
        updated = change(self.catalog.account_attributes(account_id))
        self.catalog.set_account_attributes(account_id, updated)
        with self._lock:
            self._cached.pop(account_id, None)
