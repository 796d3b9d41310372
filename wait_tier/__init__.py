"""The wait tier: the holder, one asyncio process holding long-poll receives outside Lambda's meter
(`docs/wait_tier.md`; the layer's side is `mnsd.waiting`)."""
