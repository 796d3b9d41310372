"""Messages of the first-attempt FIFO queue: the first pushes to HTTP, mail and SMS endpoints the fan-out handed over."""

from mnsd.entry.push import make_first_attempt_handler

handler = make_first_attempt_handler()
