"""The wait tier's layer side (`wait_tier/` is the tier; `docs/wait_tier.md`): the contract both speak
(`contract`) and the wakes the service posts to it (`wakes`); a receive's answer with or without the tier is the
receive operation's (`mnsd.operations.receive_message`)."""
