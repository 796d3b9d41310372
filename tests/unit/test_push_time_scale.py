"""The local runtime's push time scale: which values `MNS_PUSH_TIME_SCALE` takes."""

import pytest

from local_runtime.push import time_scale


def test_real_time_unless_set():
    assert time_scale({}) == 1.0
    assert time_scale({"MNS_PUSH_TIME_SCALE": " "}) == 1.0


def test_a_fraction_of_real_time():
    assert time_scale({"MNS_PUSH_TIME_SCALE": "0.01"}) == 0.01
    assert time_scale({"MNS_PUSH_TIME_SCALE": "1"}) == 1.0


@pytest.mark.parametrize("text", ["0", "-1", "2", "fast", "nan"])
def test_anything_else_is_refused(text):
    with pytest.raises(ValueError, match="MNS_PUSH_TIME_SCALE"):
        time_scale({"MNS_PUSH_TIME_SCALE": text})
