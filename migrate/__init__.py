"""Move an MNS estate (queues, topics, subscriptions, tags, dead-letter policies and waiting messages) from one
MNS-compatible service to another: `python -m migrate --help`. A client of both services only, over their public APIs."""
