import pytest

from mnsd.ground import errors
from mnsd.ground.validation import int_in_range, mns_bool
from mnsd.model.names import check_queue_name


@pytest.mark.parametrize("name", ["a", "A1", "9-queue", "q-" + "x" * 254, "abc-DEF-123"])
def test_valid_names(name):
    assert check_queue_name(name) == name


@pytest.mark.parametrize("name", ["-a", "a_b", "a.b", "a b", "\u00e9t\u00e9", "a\n", "q/x"])
def test_invalid_names(name):
    with pytest.raises(errors.InvalidQueueName):
        check_queue_name(name)


@pytest.mark.parametrize("name", ["", "a" * 257])
def test_name_length(name):
    with pytest.raises(errors.QueueNameLengthError):
        check_queue_name(name)


def test_int_in_range():
    assert int_in_range("X", "5", 0, 10) == 5
    assert int_in_range("X", "10", 0, 10) == 10
    assert int_in_range("X", "0", 0, 10) == 0
    assert int_in_range("X", "-3", -5, 10) == -3
    # Python's int() takes all of these; MNS reads integers as ASCII digits only.
    for bad in ("11", "-1", "abc", "", None, "1.5", " 10 ", "1_0", "\u0665", "+5 ", "+5", "\uff15", "0" * 30):
        with pytest.raises(errors.InvalidArgument) as info:
            int_in_range("DelaySeconds", bad, 0, 10, "seconds")
        assert info.value.message == "The value of DelaySeconds should between 0 and 10 seconds."


def test_mns_bool():
    assert mns_bool("L", "True") is True
    assert mns_bool("L", "false") is False
    assert mns_bool("L", " TRUE ") is True
    for bad in ("yes", "1", "", None):
        with pytest.raises(errors.InvalidArgument):
            mns_bool("L", bad)
