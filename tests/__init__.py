"""The tests, one package: every helper is imported by its name here (`tests.<folder>.<module>`)."""
