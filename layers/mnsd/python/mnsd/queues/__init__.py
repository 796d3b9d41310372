"""Queues and their messages: the domain entities, the queue service, receipt handles and long-poll wake-ups."""
