"""The shared layer of the MNS-compatible service: protocol, domain and storage."""
