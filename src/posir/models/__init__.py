"""Retrieval models: a registry of backends built from config entries."""
