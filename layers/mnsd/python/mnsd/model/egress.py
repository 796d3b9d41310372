"""Which addresses HTTP pushes may reach: public unicast only, unless an explicit allow-list says otherwise.

Loopback, private, shared, link-local (the instance metadata address among them), multicast, reserved
and unspecified addresses are internal, also when embedded in an IPv6 address (IPv4-mapped, NAT64,
6to4, Teredo). The allow-list (`MNS_PUSH_ALLOWED_NETWORKS`, comma-separated networks) is for local
testing and is empty on AWS. Subscribe refuses what it can decide without DNS (`refuse_internal_endpoint`);
the real guard is the check of the resolved addresses at every push (`mnsd.push.http_request`).
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterable
from urllib.parse import urlsplit

from mnsd.ground import errors

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network

_NAT64 = (ipaddress.IPv6Network("64:ff9b::/96"), ipaddress.IPv6Network("64:ff9b:1::/48"))


class AddressRefused(Exception):
    """The endpoint's host is, or resolves to, an address pushes may not reach."""


def allowed_networks(text: str) -> tuple[Network, ...]:
    """The allow-list setting: comma-separated networks (`127.0.0.0/8,::1/128`); empty allows none."""
    return tuple(ipaddress.ip_network(part.strip(), strict=False) for part in text.split(",") if part.strip())


def _embedded_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address.teredo is not None:
        return address.teredo[1]
    if any(address in network for network in _NAT64):
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


def is_public(address: Address) -> bool:
    """A globally routable unicast address (and, for IPv6, no internal IPv4 address inside it)."""
    if isinstance(address, ipaddress.IPv6Address):
        embedded = _embedded_ipv4(address)
        if embedded is not None and not is_public(embedded):
            return False
    internal = (
        address.is_private
        or address.is_loopback
        or address.is_link_local
        or address.is_multicast
        or address.is_reserved
        or address.is_unspecified
    )
    return address.is_global and not internal


def permitted(address: Address, allowed: Iterable[Network]) -> bool:
    if is_public(address):
        return True
    candidates: list[Address] = [address]
    if isinstance(address, ipaddress.IPv6Address) and (embedded := _embedded_ipv4(address)) is not None:
        candidates.append(embedded)
    return any(candidate in network for candidate in candidates for network in allowed)


def literal_address(host: str) -> Address | None:
    """The address a host names without any DNS: an IP literal, or a legacy IPv4 form the resolver
    accepts (`2130706433`, `0x7f.1`, `127.1`)."""
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        pass
    try:
        return ipaddress.IPv4Address(socket.inet_aton(host))
    except (OSError, ValueError):
        return None


def refused_at_subscribe(url: str, allowed: Iterable[Network]) -> bool:
    """Whether an HTTP endpoint can be refused before any DNS: its host is an internal literal address
    or a `localhost` name (RFC 6761: always loopback)."""
    host = (urlsplit(url).hostname or "").rstrip(".").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return not permitted(ipaddress.IPv4Address("127.0.0.1"), allowed)
    address = literal_address(host)
    return address is not None and not permitted(address, allowed)


def refuse_internal_endpoint(endpoint: str, allowed_networks_setting: str) -> None:
    """At Subscribe: EndpointInvalid for an HTTP endpoint whose host is internal without DNS. (A name's
    addresses are checked at every push, after resolution.)"""
    if not endpoint.lower().startswith(("http://", "https://")):
        return
    try:
        port = urlsplit(endpoint).port
    except ValueError:
        port = -1
    if port == -1 or port == 0:
        raise errors.EndpointInvalid("The endpoint's port is invalid.")
    if refused_at_subscribe(endpoint, allowed_networks(allowed_networks_setting)):
        raise errors.EndpointInvalid("The endpoint's host is an internal address, which pushes may not reach.")
