"""Fixtures shared by every test layer."""

import pytest

from local_runtime import moto_fixes
from tests.support import bytecode
from tests.support.push_receiver import HangingEndpoint, PushEndpoint

# What boto3 finds under moto: placeholder keys and a region, so no client made in a test signs with a
# developer's own keys or asks for a region.
AWS_TEST_ENVIRONMENT = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_SESSION_TOKEN": "testing",
    "AWS_DEFAULT_REGION": "us-east-1",
}


@pytest.hookimpl(trylast=True)  # after pytest has grouped the items by their parametrized session fixtures
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The files that hold a long case (`slow`) run first, each file's items in their order: the parallel workers
    (`make test`) start on the long cases and share out the short ones at the end, instead of one worker running a
    long case alone while the other has finished."""
    long = {item.nodeid.split("::")[0] for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: item.nodeid.split("::")[0] not in long)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_setupnodes(config: pytest.Config) -> None:
    """Before the parallel workers start (`make test`): our modules compiled and the test files rewritten once, which
    each worker would otherwise do on a fresh clone (`tests.support.bytecode`)."""
    bytecode.write(config)


@pytest.fixture(scope="session", autouse=True)
def moto_as_under_make_run() -> None:
    """moto patched as `make run` patches it (`local_runtime.moto_fixes`: AWS's answers where moto's differ, and
    cheaper DynamoDB calls) in every test, whichever test of a worker's process first starts a local server."""
    moto_fixes.apply()


@pytest.fixture
def aws_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    """Placeholder AWS keys and a region in the environment, for the test's duration."""
    for name, value in AWS_TEST_ENVIRONMENT.items():
        monkeypatch.setenv(name, value)


@pytest.fixture
def push_endpoint():
    endpoint = PushEndpoint()
    yield endpoint
    endpoint.close()


@pytest.fixture
def hanging_endpoint():
    endpoint = HangingEndpoint()
    yield endpoint
    endpoint.close()
