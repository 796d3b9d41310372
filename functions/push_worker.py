"""Messages of the push queue: the retry state machine's delivery attempts and drops."""

from mnsd.push.handlers import make_push_worker_handler

handler = make_push_worker_handler()
