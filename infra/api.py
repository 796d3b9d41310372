"""The HTTP API at the root of its host: one function per route of `mnsd.request.routes.ROUTES`, plus the catch-all."""

import json
from collections.abc import Callable, Mapping

import jsii
from aws_cdk import Duration, RemovalPolicy
from aws_cdk import aws_apigateway as apigateway
from aws_cdk import aws_apigatewayv2 as apigw
from aws_cdk import aws_apigatewayv2_integrations as integrations
from aws_cdk import aws_certificatemanager as acm
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from constructs import Construct

from infra.capacity import ROUTE_MEMORY, Capacity
from infra.functions import LOG_RETENTION, Functions
from mnsd.request.routes import CATCH_ALL, Route

HTTP_METHODS = {m.value: m for m in apigw.HttpMethod}
# A long poll claims for the last time 24 s after its arrival and answers within 30 s, retries included
# (`mnsd.ground.deadlines`); API Gateway gives up at 30 s.
LONG_POLL_TIMEOUT = Duration.seconds(30)
# The access log line of each request (`infra.observability`: `-c accessLogFields=trimmed|full`). Trimmed: what an
# operator needs to find a request and its outcome (the request id the client got as `x-mns-request-id` is in the
# function's answer, API Gateway's id here), with short names and the time as epoch milliseconds; full: the
# previous format, with the route key, the integration's status and the time as text besides.
ACCESS_LOG_FORMATS = {
    "trimmed": {
        "id": "$context.requestId",
        "ip": "$context.identity.sourceIp",
        "t": "$context.requestTimeEpoch",
        "m": "$context.httpMethod",
        "p": "$context.path",
        "s": "$context.status",
        "len": "$context.responseLength",
        "ms": "$context.responseLatency",
        "err": "$context.integrationErrorMessage",
    },
    "full": {
        "requestId": "$context.requestId",
        "ip": "$context.identity.sourceIp",
        "time": "$context.requestTime",
        "method": "$context.httpMethod",
        "path": "$context.path",
        "routeKey": "$context.routeKey",
        "status": "$context.status",
        "length": "$context.responseLength",
        "latency": "$context.responseLatency",
        "integrationStatus": "$context.integrationStatus",
        "integrationError": "$context.integrationErrorMessage",
    },
}


def access_log_format(fields: str) -> dict[str, str]:
    """The access log's fields, `trimmed` or `full`."""
    return ACCESS_LOG_FORMATS[fields]


@jsii.implements(apigw.IAccessLogSettings)
class AccessLogs:
    def __init__(self, log_group: logs.ILogGroup, fields: str) -> None:
        self._destination = apigw.LogGroupLogDestination(log_group)
        self._fields = fields

    @property
    def destination(self) -> apigw.IAccessLogDestination:
        return self._destination

    @property
    def format(self) -> apigateway.AccessLogFormat:
        return apigateway.AccessLogFormat.custom(json.dumps(access_log_format(self._fields)))


class Api(Construct):
    """`routes` become `METHOD /path` routes, each served by its own function with the route's grants.

    With `domain_name` and `certificate_arn` the API is also served at the root of that host. With `tier_route`
    each route it gives an integration for (given the route and its function) is integrated so (the wait tier's
    routes, `infra.wait_tier`); the others with their function.
    """

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        functions: Functions,
        routes: Mapping[str, Route],
        domain_name: str | None = None,
        certificate_arn: str | None = None,
        capacity: Capacity | None = None,
        tier_route: Callable[[Route, lambda_.Function], apigw.HttpRouteIntegration | None] | None = None,
    ) -> None:
        super().__init__(scope, id)
        capacity = capacity or Capacity()
        if bool(domain_name) != bool(certificate_arn):
            raise ValueError("a custom domain needs both domainName and certificateArn")
        self.http_api = apigw.HttpApi(self, "HttpApi", create_default_stage=False)
        self.domain_name = None
        self.endpoint = f"https://{domain_name}" if domain_name else self.http_api.api_endpoint  # what clients use
        self.account_domain_name = None
        if domain_name and certificate_arn:
            certificate = acm.Certificate.from_certificate_arn(self, "Certificate", certificate_arn)
            self.domain_name = apigw.DomainName(self, "Domain", domain_name=domain_name, certificate=certificate)
            # `{AccountId}.{domain}` names the account whose resources a call is on, as MNS's hosts do
            # (`mnsd.request.api`): another account's shared queues are reached there. The certificate covers both names.
            self.account_domain_name = apigw.DomainName(
                self, "AccountDomain", domain_name=f"*.{domain_name}", certificate=certificate
            )
        access_logs = logs.LogGroup(
            self,
            "AccessLogs",
            retention=LOG_RETENTION,
            removal_policy=RemovalPolicy.DESTROY,
            encryption_key=functions.encryption.key,
        )
        self.stage = apigw.HttpStage(
            self,
            "DefaultStage",
            http_api=self.http_api,
            stage_name="$default",
            auto_deploy=True,
            access_log_settings=AccessLogs(access_logs, functions.log_settings.access_log_fields),
            domain_mapping=apigw.DomainMappingOptions(domain_name=self.domain_name) if self.domain_name else None,
        )
        if self.account_domain_name is not None:
            apigw.ApiMapping(
                self, "AccountMapping", api=self.http_api, domain_name=self.account_domain_name, stage=self.stage
            )
        for name, route in routes.items():
            # The long-poll route is capped (and guaranteed) at its reserved concurrency: consumers can take
            # no more of the account's pool than that, so they never throttle sends, deletes or push. Without
            # reservations (`Capacity.reserves`) long polls share the pool with everything else.
            function = functions.add(
                name,
                timeout=LONG_POLL_TIMEOUT if route.long_poll else Duration.seconds(10),
                memory_size=capacity.receive_memory if route.long_poll else ROUTE_MEMORY,
                reserved_concurrency=capacity.reservation(capacity.receive_concurrency) if route.long_poll else None,
            )
            integration = tier_route(route, function) if tier_route is not None else None
            if integration is None:
                integration = integrations.HttpLambdaIntegration(f"Int-{name}", function)
            self.http_api.add_routes(path=route.path, methods=[HTTP_METHODS[route.method]], integration=integration)
        apigw.HttpRoute(
            self,
            "DefaultRoute",
            http_api=self.http_api,
            route_key=apigw.HttpRouteKey.DEFAULT,
            integration=integrations.HttpLambdaIntegration(f"Int-{CATCH_ALL}", functions.add(CATCH_ALL)),
        )
