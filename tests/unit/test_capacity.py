import pytest

from mnsd.storage.capacity import item_size, read_units, value_size, write_units


def test_strings_and_binary():
    assert item_size({"pk": {"S": "abc"}}) == 2 + 3
    assert item_size({"b": {"S": "\u00e9\u4e2d"}}) == 1 + 2 + 3
    assert item_size({"z": {"B": b"\x00" * 10}}) == 1 + 10


@pytest.mark.parametrize(
    "number,size",
    [
        ("0", 2),
        ("1", 2),
        ("12", 2),
        ("123", 3),
        ("1700000000123", 8),
        ("1700000000000", 2),
        ("-12.5", 3),
        ("1000", 2),
        ("0.001", 2),
    ],
)
def test_numbers(number, size):
    assert value_size({"N": number}) == size


def test_bool_null_list_map_sets():
    assert value_size({"BOOL": True}) == 1
    assert value_size({"NULL": True}) == 1
    # list: 3 + per element (1 + size)
    assert value_size({"L": [{"S": "ab"}, {"S": "c"}]}) == 3 + (1 + 2) + (1 + 1)
    # map: 3 + per element (1 + name + size)
    assert value_size({"M": {"k": {"S": "vv"}, "kk": {"N": "5"}}}) == 3 + (1 + 1 + 2) + (1 + 2 + 2)
    assert value_size({"SS": ["a", "bb"]}) == 3
    assert value_size({"NS": ["1", "123"]}) == 2 + 3
    assert value_size({"BS": [b"ab", b"c"]}) == 3
    with pytest.raises(ValueError):
        value_size({"X": 1})


def test_lease_like_item():
    item = {
        "pk": {"S": "q" * 16},  # 2 + 16
        "sk": {"S": "L" + "0" * 15 + "M" * 20},  # 2 + 36
        "v": {"N": "1700000000123"},  # 1 + 8
        "r": {"N": "0"},  # 1 + 2
        "m": {"S": "A" * 32},  # 1 + 32
    }
    assert item_size(item) == 18 + 38 + 9 + 3 + 33


@pytest.mark.parametrize("size,units", [(0, 1), (1, 1), (1024, 1), (1025, 2), (65536, 64), (65537, 65)])
def test_write_units(size, units):
    assert write_units(size) == units


@pytest.mark.parametrize(
    "size,consistent,units",
    [
        (0, False, 0.5),
        (4096, False, 0.5),
        (4097, False, 1.0),
        (4096, True, 1.0),
        (4097, True, 2.0),
        (65536, True, 16.0),
    ],
)
def test_read_units(size, consistent, units):
    assert read_units(size, consistent) == units
