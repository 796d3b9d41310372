#!/usr/bin/env python3
"""The CDK app: `cdk deploy` puts the whole MNS-compatible service into one AWS account."""

import aws_cdk as cdk

from infra.stack import MnsStack

app = cdk.App()
MnsStack(app, "Mns")
app.synth()
