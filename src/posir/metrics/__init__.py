"""Metrics: per-query scores, position bins and length buckets, PSI."""
