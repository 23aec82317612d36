"""Installed package versions, as the identities of cached and converted artefacts name them."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version


def installed_version(distribution: str) -> str:
    """The installed version of a distribution, 'not-installed' without one."""
    try:
        return version(distribution)
    except PackageNotFoundError:
        return "not-installed"
