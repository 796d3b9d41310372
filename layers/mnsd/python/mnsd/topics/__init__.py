"""Topics, subscriptions and publishing: the domain entities and the topic service."""
