"""The one guarded JSON reader (`mnsd.ground.jsontext`): nesting bounded before parsing, brackets inside strings not
counted, every refusal a `ValueError` (or `InvalidArgument` through `parse_json`), never a `RecursionError`."""

from __future__ import annotations

import random

import pytest

from mnsd.ground import errors, jsontext
from mnsd.ground.jsontext import MAX_DEPTH


def test_a_document_as_deep_as_allowed_is_read_and_one_level_more_is_refused():
    assert jsontext.loads("[" * MAX_DEPTH + "]" * MAX_DEPTH) is not None
    with pytest.raises(jsontext.TooDeep):
        jsontext.loads("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1))


def test_brackets_inside_strings_do_not_count():
    text = '{"a": "' + "[{" * 500 + '\\"[[", "b": [1, {"c": "]]]"}]}'
    assert jsontext.loads(text)["b"][1] == {"c": "]]]"}
    assert jsontext.depth(text) == 3


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 1000, 100_000])
def test_deep_documents_are_refused_before_parsing(depth):
    for text in ("[" * depth + "]" * depth, '{"a":' * depth + "1" + "}" * depth, "[" * depth):
        with pytest.raises(ValueError):
            jsontext.loads(text)


def test_parse_json_answers_invalid_argument_naming_what_was_read():
    with pytest.raises(errors.InvalidArgument, match="The DlqPolicy is nested deeper"):
        jsontext.parse_json("[" * 2000, "The DlqPolicy")
    with pytest.raises(errors.InvalidArgument, match="The DlqPolicy was not well-formed"):
        jsontext.parse_json(b"\xff\xfe\x00{", "The DlqPolicy")
    assert jsontext.parse_json('{"Enabled": true}'.encode("utf-16"), "The DlqPolicy") == {"Enabled": True}


def test_any_text_is_a_value_or_a_value_error():
    """Seeded: random mixes of JSON's punctuation, quotes, escapes, digits and non-ASCII, never another exception."""
    rng = random.Random(38)
    alphabet = '[]{}",:\\ 0123456789eE.-+truefalsnl\u00e9\ud800\x00'
    for _ in range(3000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(1, 200)))
        if rng.random() < 0.2:
            text = rng.choice("[{") * rng.randrange(30, 3000) + text
        try:
            jsontext.loads(text)
        except ValueError:
            pass
