#!/usr/bin/env python3
"""The CDK app: `cdk deploy` puts the whole MNS-compatible service into one AWS account."""

import aws_cdk as cdk

from infra.nag import build

app = cdk.App()
build(app)  # the stack, with cdk-nag's AwsSolutions checks as an Aspect
app.synth()
