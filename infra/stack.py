from aws_cdk import CfnOutput, Stack
from constructs import Construct

from infra.api import Api
from infra.tables import Tables


class MnsStack(Stack):
    def __init__(self, scope: Construct, id: str, **kwargs: object) -> None:
        super().__init__(scope, id, **kwargs)
        tables = Tables(self, "Tables", deletion_protection=bool(self.node.try_get_context("deletionProtection")))
        api = Api(
            self,
            "Api",
            tables=tables,
            mns_region=self.node.try_get_context("mnsRegion") or "cn-hangzhou",
            powertools_layer_version=int(self.node.try_get_context("powertoolsLayerVersion") or 27),
        )
        CfnOutput(self, "Endpoint", value=api.http_api.api_endpoint, description="MNS endpoint for the SDKs")
