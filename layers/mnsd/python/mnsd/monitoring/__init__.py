"""Monitoring on AWS, run by one scheduled function a minute (`mnsd.entry.monitoring`): the gauges of every
monitored queue and receiver sampled into CloudWatch as EMF (`sampler`), and the CloudWatch alarms queues ask for kept
in step with their `Alarms` attribute (`alarms`). It reads what the storage already keeps (`MessageStore.backlog`, the
queue records); the request path never waits on it.
"""
