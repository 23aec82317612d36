"""``backend: mteb`` entries run every kind MTEB's metadata names, each where it belongs
(posir.models.backends.mteb_kinds): dense encoders as dense or search entries, late-interaction and sparse models as
search entries (``output: search``), cross-encoders as second stages (``scorers: backend: mteb``). An entry that puts a
model where its kind does not run, or whose loader is not installed (PyLate), is refused when the workflow starts,
naming the entry, the kind, the reason and the fix; models MTEB's registry does not hold pass (their loader decides)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from posir.config import ConfigError
from posir.models.backends.mteb_kinds import check_model_entry, check_scorer_entry, model_kind
from posir.models.declarations.spec import ModelSpec
from posir.plan import Plan, Wildcards

ROOT = Path(__file__).resolve().parents[2]


def mteb_entry(model: str, **keys: str) -> ModelSpec:
    return ModelSpec.from_config("x", {"backend": "mteb", "model": model, **keys})


@pytest.mark.parametrize(
    ("model", "output", "kind", "key", "words"),
    [
        (
            "colbert-ir/colbertv2.0",
            "search",
            "late-interaction",
            "model",
            ("PyLate", "output: multi-vector", "backend: sentence-transformers"),
        ),
        ("jinaai/jina-colbert-v2", "dense", "late-interaction", "model", ("PyLate", "output: multi-vector")),
        ("mteb/baseline-random-colbert", "dense", "late-interaction", "output", ("set output: search", "multi-vector")),
        ("naver/splade-v3", "dense", "sparse", "output", ("set output: search", "output: sparse")),
        ("mteb/baseline-bm25s", "dense", "sparse", "output", ("set output: search",)),
        ("BAAI/bge-reranker-v2-m3", "dense", "cross-encoder", "model", ("scorers:", "backend: mteb", "pipeline")),
        ("mteb/baseline-random-cross-encoder", "search", "cross-encoder", "model", ("scorers:", "backend: mteb")),
    ],
)
def test_a_model_where_its_kind_does_not_run_is_refused_naming_entry_kind_reason_and_fix(
    model, output, kind, key, words
) -> None:
    spec = mteb_entry(model, output=output)
    assert model_kind(model) == kind
    with pytest.raises(ConfigError) as refused:
        check_model_entry(spec)
    message = str(refused.value)
    assert message.startswith(f"config: models.x.{key}: ") and f"a {kind} model" in message and model in message
    assert all(word in message for word in words) and "\n" not in message


@pytest.mark.parametrize(
    ("model", "output"),
    [
        ("sentence-transformers/all-MiniLM-L6-v2", "dense"),
        ("sentence-transformers/all-MiniLM-L6-v2", "search"),
        ("BAAI/bge-m3", "dense"),
        ("not-in-mteb/model", "dense"),
        ("mteb/baseline-random-colbert", "search"),
        ("mteb/baseline-random-sparse-encoder", "search"),
        ("naver/splade-v3", "search"),
        ("mteb/baseline-bm25s", "search"),
    ],
)
def test_every_kind_runs_where_it_belongs(model: str, output: str) -> None:
    check_model_entry(mteb_entry(model, output=output))


def test_a_dense_encoder_and_a_model_mteb_does_not_know_have_the_kind_their_loader_gives() -> None:
    assert model_kind("sentence-transformers/all-MiniLM-L6-v2") == "dense"
    assert model_kind("not-in-mteb/model") is None


def test_a_second_stage_must_be_a_cross_encoder_that_scores_each_pair_on_its_own() -> None:
    check_scorer_entry("ce", "mteb/baseline-random-cross-encoder", None)
    check_scorer_entry("ce", "BAAI/bge-reranker-v2-m3", None)
    check_scorer_entry("ce", "not-in-mteb/model", None)  # its loader decides, in the job
    with pytest.raises(
        ConfigError, match=r"^config: scorers\.ce\.model: .*a sparse model, not a cross-encoder.*output: search"
    ):
        check_scorer_entry("ce", "mteb/baseline-bm25s", None)
    with pytest.raises(
        ConfigError, match=r"^config: scorers\.ce\.model: .*a dense model.*backend: mteb \(a first stage\)"
    ):
        check_scorer_entry("ce", "sentence-transformers/all-MiniLM-L6-v2", None)
    with pytest.raises(ConfigError, match=r"not a pair scorer: it scores a pair by its place in the list"):
        check_scorer_entry("ce", "mteb/baseline-no-reranking", None)


@pytest.mark.parametrize(
    ("keys", "key", "words"),
    [
        ({"long_input": "chunks"}, "long_input", "not defined for output 'search'"),
        ({"renorm": "r1"}, "renorm", "defined for dense vectors"),
    ],
)
def test_a_search_entry_has_no_windows_or_vector_keys(keys, key, words) -> None:
    with pytest.raises(ConfigError, match=rf"models\.x\.{key}: .*{words}"):
        mteb_entry("mteb/baseline-bm25s", output="search", **keys)


def test_only_backend_mteb_ranks_by_its_model() -> None:
    with pytest.raises(ConfigError, match=r"models\.x\.output: 'search' is not available.*backend: mteb for search"):
        ModelSpec.from_config("x", {"backend": "sentence-transformers", "model": "m", "output": "search"})
    spec = mteb_entry("mteb/baseline-bm25s", output="search")
    assert spec.ranks_itself and not spec.encodes and not spec.is_dense


def test_the_plan_refuses_a_late_interaction_mteb_entry_before_any_job() -> None:
    config = yaml.safe_load((ROOT / "config.yaml").read_text(encoding="utf-8"))
    config["models"]["colbert-mteb"] = {"backend": "mteb", "model": "colbert-ir/colbertv2.0"}
    config["evaluation"] = [{"benchmark": "squad-long", "models": ["bm25", "colbert-mteb"], "settings": ["eng-eng"]}]
    for key in ("paper_tables", "published", "translation_comparisons"):
        config[key] = {}
    config["analyses"] = {"saliency": {"runs": {}}, "representation": {"runs": {}}}
    with pytest.raises(ConfigError, match=r"models\.colbert-mteb\.model: .*late-interaction model"):
        Plan.from_config(config, ROOT / "prompts")


def test_a_search_entry_plans_no_encoding_and_a_search_job_that_holds_its_model() -> None:
    config = yaml.safe_load((ROOT / "config.yaml").read_text(encoding="utf-8"))
    search = {"backend": "mteb", "model": "mteb/baseline-random-colbert", "output": "search", "mem_mb": 900}
    config["models"]["colbert-mteb"] = search
    config["models"]["colbert-mteb-gpu"] = {**search, "device": "cuda"}
    config["scorers"]["ce-mteb"] = {"backend": "mteb", "model": "mteb/baseline-random-cross-encoder"}
    config["pipelines"]["bm25.ce-mteb"] = {"first_stage": "bm25", "second_stage": "ce-mteb", "depth": 10}
    models = ["bm25", "colbert-mteb", "colbert-mteb-gpu", "bm25.ce-mteb"]
    config["evaluation"] = [{"benchmark": "squad-long", "models": models, "settings": ["eng-eng"]}]
    for key in ("paper_tables", "published", "translation_comparisons"):
        config[key] = {}
    config["analyses"] = {"saliency": {"runs": {}}, "representation": {"runs": {}}}
    retrieval = Plan.from_config(config, ROOT / "prompts").retrieval
    assert not {m for m, _, _ in retrieval.planned_encodings} & {"colbert-mteb", "colbert-mteb-gpu"}
    cpu, gpu = (Wildcards(benchmark="squad-long", model=m, setting="eng-eng") for m in models[1:3])
    assert retrieval.retrieve_inputs(cpu) == {
        "queries": "results/benchmarks/squad-long/queries.jsonl",
        "corpus": ["results/benchmarks/squad-long/corpus.jsonl"],
    }
    assert (retrieval.retrieve_gpu(cpu), retrieval.retrieve_gpu(gpu)) == (0, 1)
    assert retrieval.retrieve_runtime(cpu) == 240
    bm25 = Wildcards(benchmark="squad-long", model="bm25", setting="eng-eng")
    assert (retrieval.retrieve_gpu(bm25), retrieval.retrieve_runtime(bm25)) == (0, 60)
    job = retrieval.rerank(Wildcards(benchmark="squad-long", model="bm25.ce-mteb", setting="eng-eng"))
    assert job.scorer.backend == "mteb"


def test_a_revision_the_registry_does_not_hold_is_refused_naming_the_entrys_revision() -> None:
    """MTEB's loader refuses it inside the job; the check names the key and the registry's revision first (before:
    the lookup failed and every kind check was skipped)."""
    with pytest.raises(ConfigError, match=r"^config: models\.x\.revision: .*at revision '0_3_0', not 'abc'"):
        check_model_entry(mteb_entry("mteb/baseline-bm25s", output="search", revision="abc"))
    with pytest.raises(ConfigError, match=r"^config: scorers\.ce\.revision: .*at revision '2', not 'abc'"):
        check_scorer_entry("ce", "mteb/baseline-random-cross-encoder", "abc")
    check_model_entry(mteb_entry("mteb/baseline-bm25s", output="search", revision="0_3_0"))
