"""The ground: leaf modules every floor may use (errors, clock, settings, the HTTP request and answer,
deadlines, validation). They import nothing of the layer but each other."""
