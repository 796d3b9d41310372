"""The operation log (LoggingEnabled) and its hourly metrics, fed by engine-neutral change events."""
