from pathlib import Path

from aws_cdk import Duration, Stack
from aws_cdk import aws_apigatewayv2 as apigw
from aws_cdk import aws_apigatewayv2_integrations as integrations
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_secretsmanager as secretsmanager
from constructs import Construct

from infra.tables import Tables
from mnsd import settings
from mnsd.routes import ROUTES

ROOT = Path(__file__).resolve().parent.parent
ASSET_EXCLUDES = ["__pycache__", "*.pyc"]
HTTP_METHODS = {m.value: m for m in apigw.HttpMethod}


class Api(Construct):
    """The HTTP API at the root of its host, one function per route, all built from `mnsd.routes.ROUTES`."""

    def __init__(
        self, scope: Construct, id: str, *, tables: Tables, mns_region: str, powertools_layer_version: int
    ) -> None:
        super().__init__(scope, id)
        self.receipt_secret = secretsmanager.Secret(self, "ReceiptSecret", description="Signs MNS receipt handles")
        self.credentials_secret = secretsmanager.Secret(
            self, "Credentials", description="MNS access keys: account:keyid:secret,..."
        )
        layer = lambda_.LayerVersion(
            self,
            "Layer",
            code=lambda_.Code.from_asset(str(ROOT / "layers" / "mnsd"), exclude=ASSET_EXCLUDES),
            compatible_runtimes=[lambda_.Runtime.PYTHON_3_11],
            description="MNS protocol, domain and storage",
        )
        powertools = lambda_.LayerVersion.from_layer_version_arn(
            self,
            "Powertools",
            f"arn:aws:lambda:{Stack.of(self).region}:017000801446:layer:"
            f"AWSLambdaPowertoolsPythonV3-python311-x86_64:{powertools_layer_version}",
        )
        code = lambda_.Code.from_asset(str(ROOT / "functions"), exclude=ASSET_EXCLUDES)
        environment = {
            settings.META_TABLE: tables.meta.table_name,
            settings.MESSAGE_TABLE: tables.messages.table_name,
            settings.REGION: mns_region,
            settings.RECEIPT_SECRET_ARN: self.receipt_secret.secret_arn,
            settings.CREDENTIALS_SECRET_ARN: self.credentials_secret.secret_arn,
            "POWERTOOLS_SERVICE_NAME": "mns",
        }
        self.http_api = apigw.HttpApi(self, "HttpApi", create_default_stage=True)
        self.functions: dict[str, lambda_.Function] = {}
        for name, route in [*ROUTES.items(), ("not_found", None)]:
            function = lambda_.Function(
                self,
                f"Fn-{name}",
                runtime=lambda_.Runtime.PYTHON_3_11,
                handler=f"{name}.handler",
                code=code,
                layers=[layer, powertools],
                memory_size=256,
                timeout=Duration.seconds(30 if route is not None and route.long_poll else 10),
                environment=environment,
                log_retention=logs.RetentionDays.ONE_MONTH,
                tracing=lambda_.Tracing.ACTIVE,
            )
            tables.meta.grant_read_write_data(function)
            tables.messages.grant_read_write_data(function)
            self.receipt_secret.grant_read(function)
            self.credentials_secret.grant_read(function)
            integration = integrations.HttpLambdaIntegration(f"Int-{name}", function)
            if route is None:
                apigw.HttpRoute(
                    self,
                    "DefaultRoute",
                    http_api=self.http_api,
                    route_key=apigw.HttpRouteKey.DEFAULT,
                    integration=integration,
                )
            else:
                self.http_api.add_routes(path=route.path, methods=[HTTP_METHODS[route.method]], integration=integration)
            self.functions[name] = function
