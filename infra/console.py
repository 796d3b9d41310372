"""The web console on the API's domain: `GET /console` and `GET /console/{proxy+}` served by one function
whose code is the `console` package (its static files included). It reads nothing but its own files: the
console's data comes from the MNS API, through requests the browser signs."""

import shutil
from pathlib import Path
from typing import Any

import jsii
from aws_cdk import AssetHashType, BundlingOptions, DockerImage, ILocalBundling
from aws_cdk import aws_apigatewayv2 as apigw
from aws_cdk import aws_apigatewayv2_integrations as integrations
from aws_cdk import aws_lambda as lambda_
from constructs import Construct

from infra.functions import Functions
from infra.layer import IGNORED

CONSOLE_SOURCE = Path(__file__).resolve().parent.parent / "console"
NAME = "console"  # the function (handler `console.handler`)
# API Gateway refuses route paths ending in "/": a request for /console/ is served by one of these.
ROUTE_PATHS = ("/console", "/console/{proxy+}")
ROUTE_KEYS = frozenset(f"GET {path}" for path in ROUTE_PATHS)


@jsii.implements(ILocalBundling)
class PackageBundling:
    """The asset is a folder holding the package folder, so that `console.handler` imports."""

    def __init__(self, source: Path) -> None:
        self.source = source

    def try_bundle(self, output_dir: str, *args: Any, **options: Any) -> bool:
        shutil.copytree(self.source, Path(output_dir) / self.source.name, ignore=shutil.ignore_patterns(*IGNORED))
        return True


def console_code(source: Path = CONSOLE_SOURCE) -> lambda_.Code:
    return lambda_.Code.from_asset(
        str(source),
        exclude=list(IGNORED),
        asset_hash_type=AssetHashType.SOURCE,
        bundling=BundlingOptions(
            # Never pulled: local bundling always succeeds (or fails the synth).
            image=DockerImage.from_registry("public.ecr.aws/sam/build-python3.11"),
            local=PackageBundling(source),
        ),
    )


class Console(Construct):
    def __init__(self, scope: Construct, id: str, *, functions: Functions, http_api: apigw.HttpApi) -> None:
        super().__init__(scope, id)
        # No table grant, no shared secret: its role may write its own log group and nothing else.
        self.function = functions.add(NAME, code=console_code(), shared_secrets=False)
        integration = integrations.HttpLambdaIntegration("Int-console", self.function)
        for path in ROUTE_PATHS:
            http_api.add_routes(path=path, methods=[apigw.HttpMethod.GET], integration=integration)
