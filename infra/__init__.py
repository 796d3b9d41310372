"""CDK constructs of the service; `infra.stack.MnsStack` composes them."""
