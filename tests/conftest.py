"""Shared fixtures: the real data mirror (../shared/data), the real SQuAD file and the local SmolLM2 server."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def mirror_dir() -> Path:
    configured = os.environ.get("POSIR_MIRROR", "").split(os.pathsep)[0]
    path = Path(configured) if configured else REPO.parent / "shared" / "data"
    if not (path / "squad" / "dev-v1.1.json").is_file():
        pytest.fail(
            f"real data mirror not found at {path}: set POSIR_MIRROR to the directory holding squad/dev-v1.1.json"
        )
    return path.resolve()


@pytest.fixture(scope="session")
def mirror() -> Path:
    return mirror_dir()


@pytest.fixture(scope="module")
def smollm2(request: pytest.FixtureRequest):
    """Base URL of the real SmolLM2-135M served for one test module; the module's ``LLM_SERVER`` sets
    (context length, threads), by default (2048, 1) since the CPU is shared with the workflow under test."""
    from posir.llm.server import local_llm_server

    n_ctx, threads = getattr(request.module, "LLM_SERVER", (2048, 1))
    with local_llm_server(n_ctx=n_ctx, threads=threads) as base_url:
        yield base_url


@pytest.fixture(scope="session")
def squad_dev(mirror: Path) -> dict:
    with open(mirror / "squad" / "dev-v1.1.json", encoding="utf-8") as handle:
        return json.load(handle)


@pytest.fixture(scope="session")
def xquad_dir(mirror: Path) -> Path:
    return mirror / "xquad"


@pytest.fixture(scope="module")
def long_english_text(xquad_dir: Path) -> str:
    """Real text far beyond 512 tokens: the first XQuAD-en article's first paragraphs joined."""
    data = json.loads((xquad_dir / "xquad.en.json").read_text(encoding="utf-8"))
    return "\n\n".join(p["context"] for p in data["data"][0]["paragraphs"][:6])
