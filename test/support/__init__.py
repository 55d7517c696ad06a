"""Helpers the tests, benchmarks and scripts share (never collected as tests)."""
