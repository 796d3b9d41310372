"""The engine's items: the ground every other room of the engine stands on; it imports none of them.

- The PynamoDB models (`wire`, `meta`, `log`, `topic`, `leases`, `check`): each item kind declared once (its keys,
  attributes, DynamoDB types and TTL), and the one place that turns records into items, items into records, and
  conditions and updates into expressions. The calls stay the engine's: every model is declared, serialised and
  turned into expressions here, while the requests go through the engine's injected client (docs/storage-models.md
  says why, and what stays raw).
- The message table's items of standard queues, read and written through `leases`' models: `layout` (keys, attribute
  names and encodings), `packs` (a batch in one item) and `pack_writes`, `shared_bodies`, `dead_letters`,
  `message_table` (a lease's reads and writes), and `conditions` (a refused condition as an outcome). (A FIFO queue's
  group and directory items are not modelled yet.)
"""
