"""Who is calling: an account's key, its policies, and (for temporary credentials) the token's narrowing."""

from __future__ import annotations

from dataclasses import dataclass

from mnsd.model.policy import ROOT_PRINCIPAL, Policy


@dataclass(frozen=True)
class Principal:
    account_id: str
    key_id: str
    # Every one of these must allow a call (a key's own policy, a token's narrowing): their intersection.
    # None at all: a root key of the account, which may do anything in it.
    policies: tuple[Policy, ...] = ()
    token: bool = False  # temporary credentials (a security token)

    @property
    def name(self) -> str:
        """How resource policies name it: the account's root stands for every key of the account."""
        return ROOT_PRINCIPAL.format(account=self.account_id)

    @property
    def is_root(self) -> bool:
        return not self.policies and not self.token
