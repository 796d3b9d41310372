"""The request path: an HTTP request (API Gateway's event or the local server's) through authentication, limits and authorization to its operation, and the MNS answer."""
