"""Every Lambda function of the service, made one way: the shared layer, one environment, its own role
and log group, and exactly the table access it declares."""

import re
import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path

from aws_cdk import Duration, RemovalPolicy
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_secretsmanager as secretsmanager
from aws_cdk import aws_ssm as ssm
from constructs import Construct

from infra.encryption import Encryption
from infra.grants import GRANTS
from infra.layer import ARCHITECTURE, IGNORED, RUNTIME, shared_layer
from infra.observability import LogSettings

ROOT = Path(__file__).resolve().parent.parent
FUNCTIONS_SOURCE = ROOT / "functions"
LOG_RETENTION = logs.RetentionDays.ONE_MONTH
# The request counters' partition keys (`mnsd.storage.dynamodb.tables.rates`), the one thing "{table}.count" may write.
COUNTER_KEYS = "rate#*"
# The account records' partition keys (`mnsd.storage.dynamodb.tables.meta`: `{account}#account`), what "{table}.account" reads.
ACCOUNT_KEYS = "*#account"
# FIFO groups' and directories' partition keys (`mnsd.storage.dynamodb.fifo.directory`: `{queue}#G{group}`, `{queue}#D{d}`),
# what "{table}.locate" reads.
LOCATE_KEYS = ("*#G*", "*#D*")
# "{table}.{access}" in a grant names one of these (or one of `KEYED_GRANTS`).
TABLE_GRANTS = {
    "read": dynamodb.Table.grant_read_data,
    "write": dynamodb.Table.grant_write_data,
    "read_write": dynamodb.Table.grant_read_write_data,
}


def pinned_version(package: str, pyproject: Path = ROOT / "pyproject.toml") -> str:
    """The version `pyproject.toml` pins `package` to (`package==X.Y.Z` among the dependencies)."""
    project = tomllib.loads(pyproject.read_text())["project"]
    requirements = [
        *project["dependencies"],
        *(r for extra in project["optional-dependencies"].values() for r in extra),
    ]
    for requirement in requirements:
        match = re.fullmatch(rf"{re.escape(package)}(\[[^\]]*\])?==([^;\s]+)", requirement.strip())
        if match:
            return match.group(2)
    raise ValueError(f"{package} is not pinned in {pyproject}")


def powertools_parameter(version: str) -> str:
    """The public SSM parameter holding the ARN of the Powertools layer `version` for our runtime and architecture.

    Powertools publishes one parameter per release (`/aws/service/powertools/python/{arch}/{runtime}/{version}`)
    in the Regions it publishes the layer to: the template names neither the publisher's account (which differs
    by partition) nor a partition. A release whose parameter is missing fails the deploy before any change.
    """
    return f"/aws/service/powertools/python/{ARCHITECTURE.name}/{RUNTIME.name}/{version}"


def grant_count(table: dynamodb.ITable, grantee: iam.IGrantable) -> iam.Grant:
    """UpdateItem on the table's request counters only (`mnsd.storage.dynamodb.tables.rates`: keys `rate#...`)."""
    return iam.Grant.add_to_principal(
        grantee=grantee,
        actions=["dynamodb:UpdateItem"],
        resource_arns=[table.table_arn],
        conditions={"ForAllValues:StringLike": {"dynamodb:LeadingKeys": [COUNTER_KEYS]}},
    )


def grant_keyed(table: dynamodb.ITable, grantee: iam.IGrantable, action: str, keys: Iterable[str]) -> iam.Grant:
    """`action` on the table's items whose partition keys match `keys` only."""
    return iam.Grant.add_to_principal(
        grantee=grantee,
        actions=[action],
        resource_arns=[table.table_arn],
        conditions={"ForAllValues:StringLike": {"dynamodb:LeadingKeys": list(keys)}},
    )


# Item access on keys of one shape (`infra.grants.ACCESS`): the action and the partition keys it may name.
KEYED_GRANTS = {
    "account": ("dynamodb:GetItem", (ACCOUNT_KEYS,)),
    "locate": ("dynamodb:BatchGetItem", LOCATE_KEYS),
}


def grant_update(table: dynamodb.ITable, grantee: iam.IGrantable) -> iam.Grant:
    """UpdateItem alone: what sends and receives write to a queue's record as the engine places its messages
    (`mnsd.storage.dynamodb.placement.queue_records.Placements`: stripes grown, the ready index started and built)."""
    return iam.Grant.add_to_principal(grantee=grantee, actions=["dynamodb:UpdateItem"], resource_arns=[table.table_arn])


def grant_metric_reads(grantee: iam.IGrantable) -> iam.Grant:
    """cloudwatch:GetMetricData, which supports no resource-level permission and no condition key (the service
    authorization reference): on "*". What it reads is the function's own choice (`mnsd.metrics.cloudwatch`: one
    queue's series in the `MNS` namespace)."""
    return iam.Grant.add_to_principal(grantee=grantee, actions=["cloudwatch:GetMetricData"], resource_arns=["*"])


SERVICE_GRANTS = {"metrics.read": grant_metric_reads}


def grant_tables(tables: Mapping[str, dynamodb.Table], grants: Iterable[str], grantee: iam.IGrantable) -> None:
    """Grants `grantee` each `{table}.{access}` of `grants` on that table only (`infra.grants.ACCESS`), and each
    service grant (`SERVICE_GRANTS`)."""
    for grant in grants:
        if grant in SERVICE_GRANTS:
            SERVICE_GRANTS[grant](grantee)
            continue
        table, _, access = grant.partition(".")
        kinds = (*TABLE_GRANTS, *KEYED_GRANTS, "count", "update")
        if table not in tables or access not in kinds:
            raise ValueError(f"unknown grant {grant!r}: tables are {sorted(tables)}, access is {sorted(kinds)}")
        if access == "count":
            grant_count(tables[table], grantee)
        elif access == "update":
            grant_update(tables[table], grantee)
        elif access in KEYED_GRANTS:
            action, keys = KEYED_GRANTS[access]
            grant_keyed(tables[table], grantee, action, keys)
        else:
            TABLE_GRANTS[access](tables[table], grantee)


class Functions(Construct):
    """Makes the functions (`add`) and keeps them in `functions`, by name (the module in `functions/`).

    Secrets and environment variables given to `add_secret` / `add_environment` reach every function,
    those made before and after. With `encryption`'s key, every log group and environment is encrypted under it and
    every function that reads a table or a secret may use the key (through those services); `grant_key` gives it
    to others. `log_settings` (`infra.observability`) decide each function's logging configuration and tracing.
    """

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        tables: Mapping[str, dynamodb.Table],
        environment: Mapping[str, str],
        powertools_version: str | None = None,
        encryption: Encryption | None = None,
        log_settings: LogSettings | None = None,
    ) -> None:
        super().__init__(scope, id)
        self.encryption = encryption or Encryption()
        self.log_settings = log_settings or LogSettings()
        self.tables = dict(tables)
        self.environment = {
            **environment,
            "POWERTOOLS_SERVICE_NAME": "mns",
            "POWERTOOLS_METRICS_NAMESPACE": "MNS",
            # Powertools' own lines below this level are not printed (the per-request line is INFO).
            "POWERTOOLS_LOG_LEVEL": self.log_settings.powertools_log_level,
            # Without tracing the handlers never load the X-Ray SDK (`mnsd.entry.lambda_handler.tracer`).
            **({} if self.log_settings.tracing else {"POWERTOOLS_TRACE_DISABLED": "true"}),
        }
        self.secrets: dict[str, secretsmanager.ISecret] = {}
        self.functions: dict[str, lambda_.Function] = {}
        self._secret_readers: list[lambda_.Function] = []  # the functions given the shared secrets
        self.layer = shared_layer(self, "Layer")
        # The layer of exactly the Powertools version the tests run with, resolved by CloudFormation at deploy.
        self.powertools_version = powertools_version or pinned_version("aws-lambda-powertools")
        self.powertools = lambda_.LayerVersion.from_layer_version_arn(
            self,
            "Powertools",
            ssm.StringParameter.value_for_string_parameter(self, powertools_parameter(self.powertools_version)),
        )
        self.code = lambda_.Code.from_asset(str(FUNCTIONS_SOURCE), exclude=list(IGNORED))

    def add(
        self,
        name: str,
        *,
        grants: Iterable[str] | None = None,
        timeout: Duration | None = None,
        memory_size: int = 256,
        reserved_concurrency: int | None = None,
        environment: Mapping[str, str] | None = None,
        secrets: Mapping[str, secretsmanager.ISecret] | None = None,
        shared_secrets: bool = True,
        code: lambda_.Code | None = None,
    ) -> lambda_.Function:
        """The function whose handler is `functions/{name}.py`'s `handler`, allowed exactly its row of
        `infra.grants.GRANTS` (`grants` replaces the row: the constructs' own tests only).

        `environment` and `secrets` (ARN variable -> secret) are this function's own, beside the shared ones;
        a function that serves no MNS call (`shared_secrets=False`) gets no shared secret, now or later.
        `code` replaces the `functions/` folder as the function's code (the handler is still `{name}.handler`).
        """
        log_group = logs.LogGroup(
            self,
            f"Logs-{name}",
            retention=LOG_RETENTION,
            removal_policy=RemovalPolicy.DESTROY,
            encryption_key=self.encryption.key,
        )
        # Our own role: no managed policy, so the function may write only its own log group.
        role = iam.Role(self, f"Role-{name}", assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"))
        function = lambda_.Function(
            self,
            f"Fn-{name}",
            runtime=RUNTIME,
            architecture=ARCHITECTURE,
            handler=f"{name}.handler",
            code=code or self.code,
            layers=[self.layer, self.powertools],
            memory_size=memory_size,
            timeout=timeout or Duration.seconds(10),
            reserved_concurrent_executions=reserved_concurrency,
            environment={**self.environment, **(environment or {})},
            role=role,
            log_group=log_group,
            logging_format=getattr(lambda_.LoggingFormat, self.log_settings.log_format.upper()),
            system_log_level_v2=getattr(lambda_.SystemLogLevel, self.log_settings.system_log_level),
            application_log_level_v2=getattr(lambda_.ApplicationLogLevel, self.log_settings.application_log_level),
            tracing=lambda_.Tracing.ACTIVE if self.log_settings.tracing else lambda_.Tracing.DISABLED,
            environment_encryption=self.encryption.key,  # None: Lambda's AWS-managed key
        )
        log_group.grant_write(role)
        if grants is None:
            if name not in GRANTS:
                raise ValueError(f"{name} has no row in infra.grants.GRANTS: add one (empty if it touches no table)")
            grants = GRANTS[name]
        grants = tuple(grants)
        grant_tables(self.tables, grants, function)
        if grants or shared_secrets or secrets:
            self.grant_key(function)
        if shared_secrets:
            self._secret_readers.append(function)
        for variable, secret in {**(self.secrets if shared_secrets else {}), **(secrets or {})}.items():
            self._give_secret(function, variable, secret)
        self.functions[name] = function
        return function

    def grant_key(self, function: lambda_.Function) -> None:
        """`function` may encrypt and decrypt data under the customer-managed key (if any) through the services
        that hold it: a function that writes a secret or an export, or sends to an encrypted queue."""
        self.encryption.grant_use(function)

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
