"""Every minute (EventBridge): the gauges of the monitored queues into CloudWatch, and the queues' alarms."""

from mnsd.entry.monitoring import make_sampler_handler

handler = make_sampler_handler()
