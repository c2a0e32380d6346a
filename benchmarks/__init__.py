"""Benchmarks: measurements to run by hand (`python -m benchmarks.<name>`), never timed tests."""
