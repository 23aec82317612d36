"""Tests against independent references: scipy, statsmodels, enumeration, finite differences, real models."""
