"""The OpenAPI's listings: every entity a filter keeps, paged by `PageNum` / `PageSize` (as the live API pages)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TypeVar

from mnsd.ground.validation import int_in_range
from mnsd.model.tags import has_tags
from mnsd.rpc.call import RpcCall

T = TypeVar("T")
PAGE_SIZES = (1, 50)
DEFAULT_PAGE_SIZE = 20
READ_PAGE = 1000


def page_request(call: RpcCall) -> tuple[int, int]:
    """(PageNum, PageSize): 1 and 20 when not given."""
    number = call.text("PageNum")
    size = call.text("PageSize")
    page_num = 1 if number is None else int_in_range("PageNum", number, 1, 1_000_000)
    page_size = DEFAULT_PAGE_SIZE if size is None else int_in_range("PageSize", size, *PAGE_SIZES)
    return page_num, page_size


def every(
    list_page: Callable[[str, str, int, str | None], tuple[list[T], str | None]], account: str, prefix: str
) -> Iterator[T]:
    """Every entity of a listing with a name prefix, a page read at a time."""
    marker: str | None = None
    while True:
        found, marker = list_page(account, prefix, READ_PAGE, marker)
        yield from found
        if not marker:
            return


def tagged(call: RpcCall) -> Callable[[str], bool]:
    """Whether a record's tags include the `Tag.N.Key` / `Tag.N.Value` filter's."""
    wanted = dict(call.tags())
    return lambda document: has_tags(document, wanted)


def paged(found: list[T], page_num: int, page_size: int) -> list[T]:
    start = (page_num - 1) * page_size
    return found[start : start + page_size]
