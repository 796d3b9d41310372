"""A FIFO queue's messages: its groups' partitions, the directory of groups that hold messages, the group's
writes, reads and rewinds, its packs, and the `FifoGroups` store.

Imports the engine's `items`, `placement` and `standard` rooms (`standard.stripe_counts`: counts by sample).
"""
