"""Benchmarks: cost per message lifecycle, local throughput, receive latency by depth, cold start."""
