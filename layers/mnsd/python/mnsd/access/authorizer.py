"""The decision for one call: the caller's own policies within its account, and across accounts the
resource policy of the queue or topic too.

Within its account a key may do what each of its policies allows (a root key: anything). A call on another
account's queue or topic (the owner is named by the endpoint's host) needs that resource's policy to allow
the caller's account and the caller's own policies to allow it as well; an explicit Deny in either refuses.
A refusal across accounts is the same whether the resource exists or not.
"""

from __future__ import annotations

from typing import Protocol

from mnsd.access.permissions import QUEUE_MESSAGES, Permission, permission_for
from mnsd.access.principal import Principal
from mnsd.ground import errors
from mnsd.model.policy import Decision, Policy


class ResourcePolicies(Protocol):
    def policy_of(self, owner: str, kind: str, name: str) -> Policy | None:
        """The resource policy of a queue or topic (None: it has none, or does not exist)."""
        ...


def denied(permission: Permission, why: str = "") -> errors.MnsError:
    return errors.AccessDenied(
        f"You are not authorized to do action {permission.action} on resource {permission.resource}"
        + (f": {why}." if why else ".")
    )


def allowed_by_own(principal: Principal, permission: Permission) -> bool:
    return all(p.decide(permission.action, permission.resource) is Decision.ALLOW for p in principal.policies)


def granted_by(policy: Policy | None, principal: Principal, permission: Permission) -> bool:
    if policy is None:
        return False
    return policy.decide(permission.action, permission.resource, principal.name) is Decision.ALLOW


class Authorizer:
    def __init__(self, resources: ResourcePolicies, region: str) -> None:
        self.resources = resources
        self.region = region

    def authorize(self, principal: Principal, permission: Permission, owner: str) -> None:
        """Returns if the call may go on; raises AccessDenied (naming the action) if not."""
        if owner == principal.account_id:
            if not allowed_by_own(principal, permission):
                raise denied(permission)
            return
        if not self.grants(owner, principal, permission) or not allowed_by_own(principal, permission):
            raise errors.AccessDenied()

    def may_send(self, sender: str, owner: str, queue: str) -> bool:
        """Whether account `sender` (a topic's fan-out, not a key) may send to `owner`'s queue `queue`."""
        if sender == owner:
            return True
        permission = permission_for("SendMessage", QUEUE_MESSAGES, {"queue": queue}, self.region, owner)
        return self.grants(owner, Principal(sender, ""), permission)

    def grants(self, owner: str, principal: Principal, permission: Permission) -> bool:
        """Whether the queue's or topic's own policy lets `principal` (of another account) do this."""
        if permission.kind is None:
            return False
        return granted_by(self.resources.policy_of(owner, permission.kind, permission.name), principal, permission)
