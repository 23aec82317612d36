"""posir: position-aware retrieval benchmarks and position-bias evaluation."""

__version__ = "0.1.0"
