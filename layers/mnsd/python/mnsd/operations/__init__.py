"""One module per MNS operation: decode the call, make one domain call, encode the answer."""
