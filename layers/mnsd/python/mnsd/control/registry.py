"""The control-plane path queues and topics share: create (idempotent), get, set attributes, list.

MNS answers both alike: creating an existing name with equal attributes succeeds (204), with other
attributes is `...AlreadyExist` (409); an account has at most so many; a missing one is `...NotExist`
(404); lists page by an opaque marker. The rules that differ (a queue's dead-letter target, a topic's
subscriptions) stay in each service.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, Protocol, TypeVar

from mnsd.ground import errors
from mnsd.ground.clock import Clock


class Resource(Protocol):
    """A queue or a topic (`Queue`, `Topic`): frozen dataclasses with these fields."""

    __dataclass_fields__: ClassVar[dict[str, Any]]

    @property
    def account_id(self) -> str: ...

    @property
    def name(self) -> str: ...

    @property
    def attributes(self) -> object: ...


R = TypeVar("R", bound=Resource)


@dataclass(frozen=True)
class Records(Generic[R]):
    """Where one kind of resource is kept (the catalog's)."""

    get: Callable[[str, str], R | None]  # (account, name)
    create: Callable[[R], R | None]  # None: created; else the record that holds the name
    update: Callable[[R], bool]  # False: there is none (any more)
    count: Callable[[str], int]
    delete: Callable[[str, str], None]  # (account, name); nothing to delete is fine
    list: Callable[[str, str, int, str | None], tuple[list[R], bool]]  # (account, prefix, limit, after)


@dataclass(frozen=True)
class Kind(Generic[R]):
    """How one kind of resource is named, kept, bounded and refused."""

    check_name: Callable[[str], object]  # raises the MNS error of a bad name
    records: Records[R]
    maximum: int  # per account
    refusals: errors.Refusals
    new: Callable[[str, str, str, Any, int, int], R]  # (account, name, incarnation id, attributes, created, modified)


def encode_marker(name: str) -> str:
    return base64.urlsafe_b64encode(name.encode("utf-8")).decode("ascii")


def decode_marker(marker: str) -> str:
    try:
        name = base64.urlsafe_b64decode(marker.encode("ascii")).decode("utf-8")
    except (binascii.Error, UnicodeError, ValueError):
        name = ""
    if not name or encode_marker(name) != marker:  # the decoder skips characters outside its alphabet
        raise errors.InvalidArgument("The value of x-mns-marker is invalid.")
    return name


def next_marker(names: list[str], more: bool) -> str | None:
    return encode_marker(names[-1]) if more and names else None


def created(existing: Resource | None, attributes: object, already_exist: type[errors.MnsError]) -> bool:
    """An idempotent create's answer, from the record that held the name (None: there was none, it was created):
    True if created, False if an equal one stood; `already_exist` if the one that stood has other attributes."""
    if existing is None:
        return True
    if existing.attributes != attributes:
        raise already_exist()
    return False


class Registry(Generic[R]):
    def __init__(self, kind: Kind[R], clock: Clock) -> None:
        self.kind = kind
        self.clock = clock

    def create(self, account_id: str, name: str, attributes: object) -> bool:
        """Create it with these attributes; False if an equal one exists (`already_exist` if it differs)."""
        records, refusals = self.kind.records, self.kind.refusals
        existing = records.get(account_id, name)
        if existing is None:
            if records.count(account_id) >= self.kind.maximum:
                raise refusals.too_many()
            now = int(self.clock.now())
            existing = records.create(self.kind.new(account_id, name, secrets.token_urlsafe(12), attributes, now, now))
        return created(existing, attributes, refusals.already_exist)

    def get(self, account_id: str, name: str) -> R:
        self.kind.check_name(name)
        found = self.kind.records.get(account_id, name)
        if found is None:
            raise self.kind.refusals.not_exist()
        return found

    def set_attributes(self, account_id: str, name: str, change: Callable[[R], object]) -> tuple[R, R]:
        """(before, after) of giving it `change(it)` as attributes; read again once if it was re-created since
        this container read it."""
        for _ in range(2):
            before = self.get(account_id, name)
            after = dataclasses.replace(before, attributes=change(before), last_modify_time=int(self.clock.now()))
            if self.kind.records.update(after):
                return before, after
        raise self.kind.refusals.not_exist()

    def delete(self, account_id: str, name: str) -> None:
        """Forget it (deleting a missing one succeeds); what it held is left to TTL."""
        self.kind.check_name(name)
        self.kind.records.delete(account_id, name)

    def list(self, account_id: str, prefix: str, limit: int, marker: str | None) -> tuple[list[R], str | None]:
        start_after = decode_marker(marker) if marker else None
        found, more = self.kind.records.list(account_id, prefix, limit, start_after)
        return found, next_marker([r.name for r in found], more)
