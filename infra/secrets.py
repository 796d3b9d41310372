"""The service's secrets, in Secrets Manager: never in the template, the environment or a table."""

from aws_cdk import SecretValue
from aws_cdk import aws_secretsmanager as secretsmanager
from constructs import Construct

from infra.encryption import Encryption
from mnsd.access.keys import NO_KEYS
from mnsd.ground import settings


class Secrets(Construct):
    """The receipt-handle signing key (generated) and the access keys (`account:keyid:secret,...`).

    The access key secret starts with no key; `python -m admin` creates accounts and keys in it, and the
    functions re-read it every `mnsd.access.keys.KEY_CACHE_SECONDS`.
    """

    def __init__(self, scope: Construct, id: str, *, encryption: Encryption | None = None) -> None:
        super().__init__(scope, id)
        self.receipt = secretsmanager.Secret(self, "ReceiptSecret", description="Signs MNS receipt handles")
        self.credentials = secretsmanager.Secret(
            self,
            "Credentials",
            description="MNS access keys: account:keyid:secret,... (managed with `python -m admin`)",
            # The empty key list: not a secret. Keys are only ever written by the admin command.
            secret_string_value=SecretValue.unsafe_plain_text(NO_KEYS),
        )
        for secret in (self.receipt, self.credentials):
            (encryption or Encryption()).encrypt_secret(secret)

    def by_variable(self) -> dict[str, secretsmanager.ISecret]:
        """Each secret under the variable that gives the functions its ARN."""
        return {settings.RECEIPT_SECRET_ARN: self.receipt, settings.CREDENTIALS_SECRET_ARN: self.credentials}
