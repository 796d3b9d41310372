"""DynamoDB simulated in memory for the capacity benchmarks: the client (`dynamodb`) and its expressions (`expressions`)."""
