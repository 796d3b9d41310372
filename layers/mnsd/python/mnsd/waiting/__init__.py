"""The wait tier's layer side (`wait_tier/` is the tier; `docs/wait_tier.md`): the contract both speak
(`contract`), a receive's answer with or without the tier (`receive`), and the wakes the service posts to it
(`wakes`)."""
