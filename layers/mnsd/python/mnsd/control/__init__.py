"""The control plane's records: the catalog of queues, topics, subscriptions and accounts over the
`MetaTable` port, the generic record path they share (`registry`), the account's attributes, its endpoint
and source-address allow-list (`endpoint_acl`), and the request limits."""
