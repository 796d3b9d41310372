from mnsd.entry.lambda_handler import make_handler

handler = make_handler("delete_receiver")
