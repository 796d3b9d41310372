"""Queues and topics through the SDK for end-to-end tests: created, listed page by page, deleted."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from mns.account import Account
from mns.mns_exception import MNSServerException
from mns.queue import Queue, QueueMeta
from mns.topic import Topic, TopicMeta


def text_queue(account: Account, name: str, meta: QueueMeta | None = None) -> Queue:
    """The queue `name` created with `meta` (default attributes without), its messages read as raw text."""
    q = account.get_queue(name)
    q.create(meta or QueueMeta())
    q.set_encoding(False)
    return q


def fresh_topic(account: Account, name: str) -> Iterator[Topic]:
    """The topic `name` (default attributes) for a fixture to yield, deleted after."""
    t = account.get_topic(name)
    t.create(TopicMeta())
    yield t
    t.delete()


def list_pages(list_page, prefix: str, per_page: int, most: int = 10) -> list[list[str]]:
    """The names `list_page` (an SDK `list_queue` or `list_topic`) gives under `prefix`, page by page, following
    the markers to the last page (`most` pages at the most)."""
    pages: list[list[str]] = []
    marker = ""
    while True:
        urls, marker = list_page(prefix=prefix, ret_number=per_page, marker=marker)
        pages.append([url.rsplit("/", 1)[1] for url in urls])
        if not marker:
            return pages
        assert len(pages) < most


def assert_deleted_and_deletes_again(resource, missing: str) -> None:
    """`resource` (an SDK Queue or Topic) deletes; it is gone (`missing`), and deleting it again is no error."""
    resource.delete()
    with pytest.raises(MNSServerException) as exc:
        resource.get_attributes()
    assert exc.value.type == missing
    resource.delete()
