"""What the operations stand on: one call as they see it (`call`), the data plane a message call is on (`planes`),
a listing's page (`paging`). The request path (`mnsd.request`) builds the call and hands it to an operation."""
