# Config validation, path conventions and the input functions every rule shares.
from pathlib import Path

from snakemake.utils import validate

from posir.config import Setting, benchmark_variant, check_references, evaluations
from posir.models.spec import ModelSpec
from posir.sources import Source


validate(config, schema="../schemas/config.schema.yaml")
check_references(config)

RESULTS = "results"
METRICS_CONFIG = config.get("metrics", {})
EVALUATIONS = list(evaluations(config))


wildcard_constraints:
    kind="corpus|queries",
    setting="[a-z]{3}-[a-z]{3}",
    model="[^/]+",
    benchmark="[^/]+",
    source="[^/]+",


def model_spec(wildcards):
    return ModelSpec.from_config(wildcards.model, config["models"][wildcards.model])


def model_entry(wildcards):
    return config["models"][wildcards.model]


def source_entry(wildcards):
    return config["sources"][wildcards.source]


def benchmark_entry(wildcards):
    return config["benchmarks"][wildcards.benchmark]


def source_file(name):
    source = Source.from_config(name, config["sources"][name])
    return f"{RESULTS}/sources/{name}/{source.filename}"


def benchmark_source_files(wildcards):
    roles = config["benchmarks"][wildcards.benchmark]["sources"]
    return {role: source_file(name) for role, name in roles.items()}


def benchmark_dir(variant):
    return f"{RESULTS}/benchmarks/{variant}"


def encode_texts_input(wildcards):
    filename = "corpus.jsonl" if wildcards.kind == "corpus" else "queries.jsonl"
    return f"{benchmark_dir(wildcards.benchmark)}/{filename}"


def encode_mem_mb(wildcards):
    return config["models"][wildcards.model].get("mem_mb", 4000)


def encode_gpu(wildcards):
    return int(model_spec(wildcards).uses_gpu)


def setting_variants(wildcards):
    """(query variant, corpus variant) benchmark directories for a setting."""
    setting = Setting.parse(wildcards.setting)
    return (
        benchmark_variant(config, wildcards.benchmark, setting.query_language),
        benchmark_variant(config, wildcards.benchmark, setting.corpus_language),
    )


def embeddings_file(model, variant, kind):
    return f"{RESULTS}/embeddings/{model}/{variant}/{kind}.npy"


def retrieve_inputs(wildcards):
    query_variant, corpus_variant = setting_variants(wildcards)
    if model_spec(wildcards).is_dense:
        return {
            "queries": embeddings_file(wildcards.model, query_variant, "queries"),
            "corpus": embeddings_file(wildcards.model, corpus_variant, "corpus"),
        }
    return {
        "queries": f"{benchmark_dir(query_variant)}/queries.jsonl",
        "corpus": f"{benchmark_dir(corpus_variant)}/corpus.jsonl",
    }


def score_run_inputs(wildcards):
    query_variant, corpus_variant = setting_variants(wildcards)
    inputs = {
        "qrels": f"{benchmark_dir(query_variant)}/qrels/test.tsv",
        "positions": f"{benchmark_dir(query_variant)}/positions.tsv",
        "run": f"{RESULTS}/runs/{wildcards.benchmark}/{wildcards.model}/{wildcards.setting}.trec",
    }
    if model_spec(wildcards).is_dense:
        inputs["corpus_embeddings"] = embeddings_file(wildcards.model, corpus_variant, "corpus")
    return inputs


def evaluations_of(benchmark):
    return [e for e in EVALUATIONS if e.benchmark == benchmark]


def summaries_of_benchmark(wildcards):
    return [
        f"{RESULTS}/aggregates/{e.benchmark}/{e.model}/{e.setting}.summary.tsv"
        for e in evaluations_of(wildcards.benchmark)
    ]


def bins_of_benchmark(wildcards):
    return [
        f"{RESULTS}/aggregates/{e.benchmark}/{e.model}/{e.setting}.bins.tsv"
        for e in evaluations_of(wildcards.benchmark)
    ]


def panel_keys(wildcards):
    return [(e.model, str(e.setting)) for e in evaluations_of(wildcards.benchmark)]


def all_outputs():
    benchmarks = sorted({e.benchmark for e in EVALUATIONS})
    outputs = []
    for name in benchmarks:
        outputs += [
            f"{RESULTS}/tables/{name}/main.csv",
            f"{RESULTS}/tables/{name}/main.md",
            f"{RESULTS}/figures/{name}/grid.png",
            f"{RESULTS}/figures/{name}/positions.png",
        ]
    outputs += [f"{RESULTS}/figures/{e.benchmark}/{e.model}/{e.setting}.png" for e in EVALUATIONS]
    return outputs


# --- the builder of a benchmark decides which final job writes it (see benchmarks_built_by) ---


def benchmarks_built_by(builder):
    """Regex of the benchmark names whose entry uses ``builder``, for rule-level wildcard_constraints.

    The final job of every builder writes the same files under results/benchmarks/{benchmark}/;
    constraining {benchmark} per job keeps exactly one able to produce a given name.
    """
    import re

    names = [n for n, e in config.get("benchmarks", {}).items() if e.get("builder") == builder]
    return "|".join(re.escape(n) for n in sorted(names)) or "(?!)"  # (?!) matches nothing
