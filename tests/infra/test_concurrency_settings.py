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
        Capacity(receive_concurrency=861)  # 861 + 20 + 10 + 10 leaves 99 of 1,000
    Capacity(receive_concurrency=860)
    Capacity(account_concurrency=3000, receive_concurrency=2000)  # a raised quota, declared


@pytest.mark.parametrize(
    "values",
    [{"receive_concurrency": 0}, {"fanout_parallelization": 11}, {"push_concurrency": 1}, {"receive_memory": 200}],
)
def test_values_lambda_would_refuse_are_refused_at_synth(values: dict[str, int]) -> None:
    with pytest.raises(ValueError):
        Capacity(**values)


def test_an_account_that_can_reserve_nothing_deploys_without_reservations() -> None:
    capacity = Capacity(account_concurrency=10)  # a new account's quota
    assert not capacity.reserves
    assert capacity.reserved == 0
    assert capacity.reservation(capacity.receive_concurrency) is None
    assert capacity.push_concurrency == 10  # still the push queue's maximum concurrency, which SQS bounds to 2..1000


@pytest.mark.parametrize(("value", "reserves"), [("false", False), (False, False), ("true", True), (True, True)])
def test_reservations_are_a_context_switch(value: object, reserves: bool) -> None:
    capacity = Capacity.from_context({"reservedConcurrency": value}.get)
    assert capacity.reserves is reserves
    assert capacity.reservation(100) == (100 if reserves else None)
    assert capacity.reserved == (capacity.receive_concurrency + 40 if reserves else 0)


def test_without_reservations_any_sizing_within_the_limits_of_each_value_synthesizes() -> None:
    Capacity(reserved_concurrency=False, receive_concurrency=5000)  # would leave nothing unreserved if reserved


def test_reservations_demanded_in_an_account_too_small_for_them_are_refused() -> None:
    with pytest.raises(ValueError, match="reservedConcurrency=false"):
        Capacity(account_concurrency=10, reserved_concurrency=True)
    with pytest.raises(ValueError, match="unreserved"):
        Capacity(account_concurrency=200)  # can reserve, but not 140 of it: a mistake, not a small account


@pytest.mark.parametrize("value", ["no", "0", "yes"])
def test_a_reservation_switch_that_is_not_true_or_false_is_refused(value: str) -> None:
    with pytest.raises(ValueError, match="true or false"):
        Capacity.from_context({"reservedConcurrency": value}.get)


@pytest.mark.parametrize(
    ("name", "key"), [("push_concurrency", "pushConcurrency"), ("first_attempt_concurrency", "firstAttemptConcurrency")]
)
def test_the_push_queues_maximum_concurrency_stays_within_what_sqs_allows(name: str, key: str) -> None:
    with pytest.raises(ValueError, match=key):
        Capacity(**{name: 1001}, reserved_concurrency=False)  # type: ignore[arg-type]
