"""Every Lambda function of the service, made one way: the shared layer, one environment, its own role
and log group, and exactly the table access it declares."""

from collections.abc import Iterable, Mapping
from pathlib import Path

from aws_cdk import Duration, RemovalPolicy, Stack
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_secretsmanager as secretsmanager
from constructs import Construct

from infra.layer import IGNORED, shared_layer

FUNCTIONS_SOURCE = Path(__file__).resolve().parent.parent / "functions"
LOG_RETENTION = logs.RetentionDays.ONE_MONTH
# "{table}.{access}" in a grant names one of these.
TABLE_GRANTS = {
    "read": dynamodb.Table.grant_read_data,
    "write": dynamodb.Table.grant_write_data,
    "read_write": dynamodb.Table.grant_read_write_data,
}


def grant_tables(tables: Mapping[str, dynamodb.Table], grants: Iterable[str], grantee: iam.IGrantable) -> None:
    """Grants `grantee` each `{table}.{read|write|read_write}` of `grants` on that table only."""
    for grant in grants:
        table, _, access = grant.partition(".")
        if table not in tables or access not in TABLE_GRANTS:
            raise ValueError(f"unknown grant {grant!r}: tables are {sorted(tables)}, access is {sorted(TABLE_GRANTS)}")
        TABLE_GRANTS[access](tables[table], grantee)


class Functions(Construct):
    """Makes the functions (`add`) and keeps them in `functions`, by name (the module in `functions/`).

    Secrets and environment variables given to `add_secret` / `add_environment` reach every function,
    those made before and after.
    """

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        tables: Mapping[str, dynamodb.Table],
        environment: Mapping[str, str],
        powertools_layer_version: int,
    ) -> None:
        super().__init__(scope, id)
        self.tables = dict(tables)
        self.environment = {**environment, "POWERTOOLS_SERVICE_NAME": "mns", "POWERTOOLS_METRICS_NAMESPACE": "MNS"}
        self.secrets: dict[str, secretsmanager.ISecret] = {}
        self.functions: dict[str, lambda_.Function] = {}
        self._secret_readers: list[lambda_.Function] = []  # the functions given the shared secrets
        self.layer = shared_layer(self, "Layer")
        self.powertools = lambda_.LayerVersion.from_layer_version_arn(
            self,
            "Powertools",
            f"arn:aws:lambda:{Stack.of(self).region}:017000801446:layer:"
            f"AWSLambdaPowertoolsPythonV3-python311-x86_64:{powertools_layer_version}",
        )
        self.code = lambda_.Code.from_asset(str(FUNCTIONS_SOURCE), exclude=list(IGNORED))

    def add(
        self,
        name: str,
        *,
        grants: Iterable[str] = (),
        timeout: Duration | None = None,
        memory_size: int = 256,
        environment: Mapping[str, str] | None = None,
        secrets: Mapping[str, secretsmanager.ISecret] | None = None,
        shared_secrets: bool = True,
        code: lambda_.Code | None = None,
    ) -> lambda_.Function:
        """The function whose handler is `functions/{name}.py`'s `handler`, allowed exactly `grants`.

        `environment` and `secrets` (ARN variable -> secret) are this function's own, beside the shared ones;
        a function that serves no MNS call (`shared_secrets=False`) gets no shared secret, now or later.
        `code` replaces the `functions/` folder as the function's code (the handler is still `{name}.handler`).
        """
        log_group = logs.LogGroup(self, f"Logs-{name}", retention=LOG_RETENTION, removal_policy=RemovalPolicy.DESTROY)
        # Our own role: no managed policy, so the function may write only its own log group.
        role = iam.Role(self, f"Role-{name}", assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"))
        function = lambda_.Function(
            self,
            f"Fn-{name}",
            runtime=lambda_.Runtime.PYTHON_3_11,
            handler=f"{name}.handler",
            code=code or self.code,
            layers=[self.layer, self.powertools],
            memory_size=memory_size,
            timeout=timeout or Duration.seconds(10),
            environment={**self.environment, **(environment or {})},
            role=role,
            log_group=log_group,
            tracing=lambda_.Tracing.ACTIVE,
        )
        log_group.grant_write(role)
        grant_tables(self.tables, grants, function)
        if shared_secrets:
            self._secret_readers.append(function)
        for variable, secret in {**(self.secrets if shared_secrets else {}), **(secrets or {})}.items():
            self._give_secret(function, variable, secret)
        self.functions[name] = function
        return function

    def add_secret(self, variable: str, secret: secretsmanager.ISecret) -> None:
        """Every function reads `secret` (its ARN in `variable`): the layer resolves them all at cold start."""
        self.secrets[variable] = secret
        for function in self._secret_readers:
            self._give_secret(function, variable, secret)

    def add_environment(self, variable: str, value: str) -> None:
        self.environment[variable] = value
        for function in self.functions.values():
            function.add_environment(variable, value)

    @staticmethod
    def _give_secret(function: lambda_.Function, variable: str, secret: secretsmanager.ISecret) -> None:
        function.add_environment(variable, secret.secret_arn)
        secret.grant_read(function)
