"""The package's modules stay small enough to read whole (docs/architecture.md: no module of more than 600 lines):
a module that outgrows it is split by concept, never squeezed (a docstring or a description removed to fit)."""

from __future__ import annotations

from tests.conftest import REPO

LIMIT = 600


def test_no_module_of_the_package_is_longer_than_the_limit() -> None:
    package = REPO / "src" / "posir"
    sizes = {str(path.relative_to(package)): len(path.read_text(encoding="utf-8").splitlines())
             for path in package.rglob("*.py")}  # fmt: skip
    assert len(sizes) > 100  # the package, not an empty folder
    too_long = {name: lines for name, lines in sizes.items() if lines > LIMIT}
    assert too_long == {}, f"split these modules by concept (docs/architecture.md): {too_long}"
