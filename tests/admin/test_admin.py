"""The admin command against a Secrets Manager secret (moto), and the functions' key cache reading it."""

import boto3
import pytest
from moto import mock_aws

from admin.__main__ import main, region_of
from mnsd.accounts import KEY_CACHE_SECONDS, NO_KEYS, StaticKeyStore, parse_keys
from mnsd.services import key_store
from mnsd.settings import Settings


class ManualClock:
    def __init__(self) -> None:
        self.time = 1_700_000_000.0

    def now(self) -> float:
        return self.time

    def sleep(self, seconds: float) -> None:
        self.time += seconds


@pytest.fixture
def secret(monkeypatch: pytest.MonkeyPatch):
    """A fresh stack's credentials secret: the empty key list, as infra/secrets.py creates it."""
    for name, value in {
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_ACCESS_KEY_ID": "t",
        "AWS_SECRET_ACCESS_KEY": "t",
    }.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("MNS_CREDENTIALS_SECRET_ARN", raising=False)
    with mock_aws():
        client = boto3.client("secretsmanager")
        arn = client.create_secret(Name="mns-credentials", SecretString=NO_KEYS)["ARN"]
        yield client, arn


def admin(secret, *args: str) -> int:
    client, arn = secret
    return main(["--secret-arn", arn, *args], secretsmanager=client)


def created(output: str) -> dict[str, str]:
    return dict(line.split("=", 1) for line in output.strip().splitlines())


def stored(secret) -> str:
    client, arn = secret
    return client.get_secret_value(SecretId=arn)["SecretString"]


def test_create_account_stores_a_key_in_the_mns_credentials_format(secret, capsys) -> None:
    assert admin(secret, "create-account") == 0
    new = created(capsys.readouterr().out)
    assert len(new["AccountId"]) == 16 and new["AccountId"].isdigit()
    # The secret is exactly what MNS_CREDENTIALS accepts locally.
    key = StaticKeyStore(stored(secret)).lookup(new["AccessKeyId"])
    assert (key.account_id, key.secret) == (new["AccountId"], new["AccessKeySecret"])


def test_keys_are_added_to_an_account_listed_without_secrets_and_revoked(secret, capsys) -> None:
    admin(secret, "create-account")
    first = created(capsys.readouterr().out)
    assert admin(secret, "create-key", first["AccountId"]) == 0
    second = created(capsys.readouterr().out)
    assert second["AccountId"] == first["AccountId"] and second["AccessKeyId"] != first["AccessKeyId"]

    assert admin(secret, "list-keys") == 0
    listing = capsys.readouterr().out
    assert listing.split() == [first["AccountId"], first["AccessKeyId"], second["AccountId"], second["AccessKeyId"]]
    assert first["AccessKeySecret"] not in listing

    assert admin(secret, "revoke-key", first["AccessKeyId"]) == 0
    assert list(parse_keys(stored(secret))) == [second["AccessKeyId"]]
    assert admin(secret, "revoke-key", second["AccessKeyId"]) == 0
    assert parse_keys(stored(secret)) == {}


def test_unknown_accounts_and_keys_are_refused_without_changing_the_secret(secret, capsys) -> None:
    admin(secret, "create-account")
    before = stored(secret)
    assert admin(secret, "create-key", "1234567890123456") == 1
    assert admin(secret, "revoke-key", "NOSUCHKEY") == 1
    assert "no key NOSUCHKEY" in capsys.readouterr().err
    assert stored(secret) == before


def test_the_secret_arn_is_required(capsys) -> None:
    assert main(["list-keys"]) == 2
    assert "CredentialsSecretArn" in capsys.readouterr().out


def test_a_revoked_key_stops_working_once_the_cache_expires_without_a_redeploy(secret, capsys) -> None:
    client, arn = secret
    admin(secret, "create-account")
    key_id = created(capsys.readouterr().out)["AccessKeyId"]
    clock = ManualClock()
    keys = key_store(Settings(credentials_secret_arn=arn), lambda name: client, clock)
    assert keys.lookup(key_id) is not None

    admin(secret, "revoke-key", key_id)
    clock.sleep(KEY_CACHE_SECONDS - 1)
    assert keys.lookup(key_id) is not None  # still cached
    clock.sleep(1)
    assert keys.lookup(key_id) is None


def test_a_key_created_after_the_functions_started_works_within_the_cache_time(secret, capsys) -> None:
    client, arn = secret
    clock = ManualClock()
    keys = key_store(Settings(credentials_secret_arn=arn), lambda name: client, clock)
    assert keys.lookup("anything") is None  # a fresh stack: no key at all
    admin(secret, "create-account")
    key_id = created(capsys.readouterr().out)["AccessKeyId"]
    clock.sleep(KEY_CACHE_SECONDS)
    assert keys.lookup(key_id) is not None


def test_the_region_comes_from_the_secret_arn() -> None:
    assert region_of("arn:aws:secretsmanager:eu-west-1:123456789012:secret:mns-AbCdEf") == "eu-west-1"
    assert region_of("mns-credentials") is None
