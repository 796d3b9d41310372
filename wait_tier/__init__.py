"""The wait tier: Pushpin holding long-poll receives outside Lambda's meter, and its waker (`docs/wait_tier.md`)."""
