"""The ground floor of the domain: the entities (`queues`, `messages`, `topics`), their rules (`fifo`, `alarms`,
`policy` documents, `endpoints` checks, `names`) and the storage ports (`ports`). It imports nothing of the layer
but its leaf modules (`errors`, `validation`, `log`'s record types)."""
