import re

import pytest

from mnsd.ground import errors
from mnsd.queues.receipts import Receipt, ReceiptCodec

CODEC = ReceiptCodec("secret")
RECEIPT = Receipt("queue-id_1", "L08" + "0001700000000000" + "ABCDEF-1-XYZ-000000001", 3, 1_700_000_123_456)


def test_round_trip():
    handle = CODEC.encode(RECEIPT)
    assert CODEC.decode(handle, "queue-id_1") == RECEIPT


def test_handle_charset():
    for version in range(50):
        handle = CODEC.encode(Receipt("q\u00e9|x", "k" * version, version, version * 7919))
        assert re.fullmatch(r"[A-Za-z0-9_-]+", handle), handle


def _flip(handle: str, index: int) -> str:
    ch = handle[index]
    return handle[:index] + ("A" if ch != "A" else "B") + handle[index + 1 :]


@pytest.mark.parametrize("index", [0, 5, 21, 22, 30, -1])
def test_tampered(index):
    handle = CODEC.encode(RECEIPT)
    with pytest.raises(errors.ReceiptHandleError):
        CODEC.decode(_flip(handle, index), "queue-id_1")


def test_truncated_and_garbage():
    handle = CODEC.encode(RECEIPT)
    for bad in (handle[:-1], handle[:22], handle[:10], "garbage", "!!!!", "a" * 100, handle + "A", "=" * 30):
        with pytest.raises(errors.ReceiptHandleError):
            CODEC.decode(bad, "queue-id_1")


@pytest.mark.parametrize("position", [0, 10, 25, -1])
def test_non_ascii(position):
    handle = CODEC.encode(RECEIPT)
    index = position % len(handle)
    bad = handle[:index] + "\u00e9" + handle[index + 1 :]
    with pytest.raises(errors.ReceiptHandleError):
        CODEC.decode(bad, "queue-id_1")


def test_other_secret_rejected():
    handle = ReceiptCodec("other").encode(RECEIPT)
    with pytest.raises(errors.ReceiptHandleError):
        CODEC.decode(handle, "queue-id_1")


def test_wrong_queue():
    with pytest.raises(errors.ReceiptHandleError):
        CODEC.decode(CODEC.encode(RECEIPT), "another-queue")


@pytest.mark.parametrize("handle", ["", None])
def test_missing(handle):
    with pytest.raises(errors.MissingReceiptHandle):
        CODEC.decode(handle, "queue-id_1")
