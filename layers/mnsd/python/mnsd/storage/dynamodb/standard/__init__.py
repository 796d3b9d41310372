"""A standard queue's messages: striped over partitions, read through the ready index or the table, counted,
and the `StripedMessageStore` that sends, claims and deletes them.

Imports the engine's `items` and `placement` rooms.
"""
