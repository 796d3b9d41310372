"""DynamoDB storage. Only this package talks to DynamoDB; it turns its errors into domain outcomes."""
