"""Lambda entry points: one module per API Gateway route, each a thin wrapper over the shared layer."""
