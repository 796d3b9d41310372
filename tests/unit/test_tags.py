"""Resource tags' rules (`mnsd.model.tags`): the live service's bounds, changes applied removals first, filters."""

from __future__ import annotations

import pytest

from mnsd.ground import errors
from mnsd.model.tags import MAX_TAGS, TagChanges, applied, has_tags, tag_map


def test_changes_apply_removals_then_additions_and_keep_a_canonical_document():
    document = applied("", TagChanges(add=(("b", "2"), ("a", "1"))))
    assert document == '{"a":"1","b":"2"}'
    assert tag_map(applied(document, TagChanges(add=(("a", "9"),), remove=("b",)))) == {"a": "9"}
    assert applied(document, TagChanges(remove_all=True)) == ""
    assert has_tags(document, {"a": "1"}) and not has_tags(document, {"a": "2"}) and has_tags(document, {})


@pytest.mark.parametrize(
    "key, value",
    [("", "v"), ("k" * 129, "v"), ("aliyun-x", "v"), ("acs:x", "v"), ("ok", "v" * 129)],
)
def test_a_bad_key_or_value_is_refused(key, value):
    with pytest.raises(errors.InvalidArgument):
        applied("", TagChanges(add=((key, value),)))


def test_at_most_twenty_tags():
    full = applied("", TagChanges(add=tuple((f"k{i}", "") for i in range(MAX_TAGS))))
    with pytest.raises(errors.InvalidArgument):
        applied(full, TagChanges(add=(("one-more", ""),)))
    assert len(tag_map(applied(full, TagChanges(add=(("k0", "same key"),))))) == MAX_TAGS
