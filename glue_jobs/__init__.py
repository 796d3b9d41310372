"""Glue PySpark jobs over DynamoDB exports of the operation-log, message and meta tables."""
