"""The engine's items as PynamoDB models: each item kind declared once (its keys, attributes, DynamoDB types and TTL),
and the one place that turns records into items, items into records, and conditions and updates into expressions.

The calls stay the engine's: every model is declared, serialised and turned into expressions here, while the
requests go through the engine's injected client (docs/storage-models.md says why, and what stays raw).
"""
