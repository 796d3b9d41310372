"""Where a queue's messages lie: its placement (stripes, send width, ready index), its growth with the load, the
placement kept in the queue's record of the meta table, and the `Placer` the message stores ask for new ids.

Imports the engine's `items` room only.
"""
