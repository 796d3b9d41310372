from mnsd.entry.lambda_handler import make_handler

handler = make_handler("get_queue_message_history")
