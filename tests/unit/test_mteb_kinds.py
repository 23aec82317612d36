"""``backend: mteb`` entries of kinds the backend cannot run (late interaction, sparse, cross-encoders, by MTEB's own
metadata) are refused when the workflow starts, naming the entry, the kind, the reason and the entry that runs them;
dense encoders and models MTEB's registry does not hold pass (posir.models.mteb_kinds)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from posir.config import ConfigError
from posir.models.mteb_kinds import model_kind, refuse_unrunnable_kind
from posir.models.spec import ModelSpec
from posir.plan import Plan

ROOT = Path(__file__).resolve().parents[2]


def mteb_entry(model: str) -> ModelSpec:
    return ModelSpec.from_config("x", {"backend": "mteb", "model": model})


@pytest.mark.parametrize(
    ("model", "kind", "words"),
    [
        (
            "colbert-ir/colbertv2.0",
            "late-interaction",
            ("PyLate", "output: multi-vector", "backend: sentence-transformers"),
        ),
        ("jinaai/jina-colbert-v2", "late-interaction", ("PyLate", "output: multi-vector")),
        ("naver/splade-v3", "sparse", ("output: sparse",)),
        ("BAAI/bge-reranker-v2-m3", "cross-encoder", ("scorers:", "backend: cross-encoder", "pipeline")),
    ],
)
def test_a_kind_the_backend_cannot_run_is_refused_naming_entry_kind_reason_and_fix(model, kind, words) -> None:
    spec = mteb_entry(model)
    assert model_kind(spec) == kind
    with pytest.raises(ConfigError) as refused:
        refuse_unrunnable_kind(spec)
    message = str(refused.value)
    assert message.startswith("config: models.x.model: ") and f"a {kind} model" in message and model in message
    assert all(word in message for word in words) and "\n" not in message


@pytest.mark.parametrize("model", ["sentence-transformers/all-MiniLM-L6-v2", "BAAI/bge-m3", "not-in-mteb/model"])
def test_dense_encoders_and_models_mteb_does_not_know_pass(model: str) -> None:
    assert model_kind(mteb_entry(model)) is None
    refuse_unrunnable_kind(mteb_entry(model))


def test_the_plan_refuses_a_late_interaction_mteb_entry_before_any_job() -> None:
    config = yaml.safe_load((ROOT / "config.yaml").read_text(encoding="utf-8"))
    config["models"]["colbert-mteb"] = {"backend": "mteb", "model": "colbert-ir/colbertv2.0"}
    config["evaluation"] = [{"benchmark": "squad-long", "models": ["bm25", "colbert-mteb"], "settings": ["eng-eng"]}]
    for key in ("paper_tables", "published", "translation_comparisons"):
        config[key] = {}
    config["analyses"] = {"saliency": {"runs": {}}, "representation": {"runs": {}}}
    with pytest.raises(ConfigError, match=r"models\.colbert-mteb\.model: .*late-interaction model"):
        Plan.from_config(config, ROOT / "prompts")
