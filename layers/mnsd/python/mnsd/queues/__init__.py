"""The queue services (control, messages, dead letters, receivers) over the model (`mnsd.model`), the queue path
resolved at the edge (`addresses`), receipt handles and long-poll wake-ups."""
