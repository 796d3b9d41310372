"""The concurrency settings: read from the context, refused when Lambda would refuse the deployment."""

import pytest

from infra.capacity import MIN_UNRESERVED, Capacity


def test_the_defaults_deploy_in_a_default_account() -> None:
    capacity = Capacity()
    assert capacity.account_concurrency == 1000
    assert capacity.account_concurrency - capacity.reserved >= MIN_UNRESERVED


def test_values_come_from_camel_case_context_keys_as_numbers_or_strings() -> None:
    context = {"receiveConcurrency": "250", "fanoutParallelization": 2, "receiveMemory": 128}
    capacity = Capacity.from_context(context.get)
    assert (capacity.receive_concurrency, capacity.fanout_parallelization, capacity.receive_memory) == (250, 2, 128)
    assert capacity.push_concurrency == Capacity().push_concurrency


def test_reservations_that_leave_less_than_the_minimum_unreserved_are_refused() -> None:
    with pytest.raises(ValueError, match="unreserved"):
        Capacity(receive_concurrency=871)  # 871 + 20 + 10 leaves 99 of 1,000
    Capacity(receive_concurrency=870)
    Capacity(account_concurrency=3000, receive_concurrency=2000)  # a raised quota, declared


@pytest.mark.parametrize(
    "values",
    [{"receive_concurrency": 0}, {"fanout_parallelization": 11}, {"push_concurrency": 1}, {"receive_memory": 200}],
)
def test_values_lambda_would_refuse_are_refused_at_synth(values: dict[str, int]) -> None:
    with pytest.raises(ValueError):
        Capacity(**values)
