"""Queues and their messages: the domain entities, the queue services (control, messages, dead letters), the
queue path resolved at the edge (`addresses`), receipt handles and long-poll wake-ups."""
