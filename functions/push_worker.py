"""Messages of the push queue: the retry state machine's delivery attempts and drops."""

from mnsd.entry.push import make_push_worker_handler

handler = make_push_worker_handler()
