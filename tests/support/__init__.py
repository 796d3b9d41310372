"""What the tests share, and the benchmarks with them: builders of stored messages, the synthesized template and
its readers, servers started for a test, signers, DynamoDB doubles (`simulator`), faults, recorders and clocks.

Test modules (`test_*.py`) import from here and are imported by nothing but pytest (`tests/unit/test_structure.py`
holds the tree to that); `bench/` imports from here, never from a test module.
"""
