"""The engine's tables other than the message table's messages: the meta table's records (queues, topics,
subscriptions, nonces, request counters), the operation log, the topic messages, and the stream records of the
message and topic message tables turned into change events.

Imports the engine's `items` room only.
"""
