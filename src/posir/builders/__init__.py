"""Benchmark builders: one module per way of making a benchmark."""
