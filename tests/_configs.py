"""The project's config.yaml, for workflow tests that replace its benchmarks."""

from __future__ import annotations

from typing import Any

# Blocks that name the default benchmarks and sources: a test config that replaces those drops them
# (and the analyses' runs, which name benchmarks too).
REPORT_BLOCKS = ("paper_tables", "published", "translation_comparisons")


def without_reports(config: dict[str, Any]) -> dict[str, Any]:
    """`config` with every block that names default benchmarks emptied (in place, and returned)."""
    for block in REPORT_BLOCKS:
        config[block] = {}
    for analysis in config.get("analyses") or {}:
        config["analyses"][analysis]["runs"] = {}
    return config
