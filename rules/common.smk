# Config validation, path conventions and the input functions every rule shares.
import re

import yaml
from snakemake.utils import validate

from posir.config import (
    CROSS_LINGUAL_BUILDER,
    ONE_VS_MANY,
    PARALLEL_BUILDER,
    SQUAD_BUILDER,
    Setting,
    Evaluation,
    benchmark_languages,
    check_references,
    check_schema,
    corpus_variants,
    embedding_model,
    evaluations,
    languages_outside_model,
    query_variant,
)
from posir.models.spec import ModelSpec
from posir.published import check_config as check_paper_config
from posir.sources import Source


# One sentence per problem (key path, what is wrong, what is allowed) before Snakemake's validate, which
# would print the whole schema; validate then fills in the schema's defaults.
check_schema(config, yaml.safe_load(open(workflow.source_path("../schemas/config.schema.yaml"))))
validate(config, schema="../schemas/config.schema.yaml")
check_references(config)

RESULTS = "results"
METRICS_CONFIG = config.get("metrics", {})
# What a benchmark's positions table depends on; bootstrap settings must not rebuild benchmarks.
POSITION_CONFIG = {k: v for k, v in METRICS_CONFIG.items() if k in ("position_bins", "length_buckets")}
EVALUATIONS = list(evaluations(config))
# Every text a model encoding has embedded, by content hash (posir.embedding_cache); "" turns it off.
EMBEDDING_CACHE = config.get("embedding_cache", f"{RESULTS}/embedding-cache.sqlite")


def names_regex(names):
    """A wildcard regex matching exactly ``names``; with none, a regex that matches nothing."""
    names = list(names)
    return "|".join(re.escape(n) for n in names) if names else "(?!x)x"


def names_with_builder(builder):
    """A wildcard regex matching exactly the benchmarks built by ``builder`` (never anything else)."""
    return names_regex(n for n, e in config["benchmarks"].items() if e["builder"] == builder)


wildcard_constraints:
    kind="corpus|queries",
    setting="[a-z]{3}-[a-z]{3}",
    language="[a-z]{3}",
    model=names_regex(config["models"]),
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


def benchmark_dir(variant):
    return f"{RESULTS}/benchmarks/{variant}"


def benchmark_source_files(wildcards):
    roles = config["benchmarks"][wildcards.benchmark]["sources"]
    return {role: source_file(name) for role, name in roles.items()}


def variant_source_files(wildcards):
    """The English reference and the language's own XQuAD-format file."""
    roles = config["benchmarks"][wildcards.benchmark]["sources"]
    return {"english": source_file(roles["eng"]), "language": source_file(roles[wildcards.language])}


def cross_lingual_inputs(wildcards):
    base = benchmark_dir(config["benchmarks"][wildcards.benchmark]["corpus_from"])
    return {
        **variant_source_files(wildcards),
        "base_corpus": f"{base}/corpus.jsonl",
        "base_paragraphs": f"{base}/paragraphs.tsv",
        "base_documents": f"{base}/documents.tsv",
    }


def encode_texts_input(wildcards):
    filename = "corpus.jsonl" if wildcards.kind == "corpus" else "queries.jsonl"
    return f"{benchmark_dir(wildcards.benchmark)}/{filename}"


def encode_mem_mb(wildcards):
    return config["models"][wildcards.model].get("mem_mb", 4000)


def encode_gpu(wildcards):
    return int(model_spec(wildcards).uses_gpu)


def embeddings_file(model, variant, kind):
    """Embeddings of a text set; a model sharing another entry's embeddings (embeddings_from) reads those."""
    return f"{RESULTS}/embeddings/{embedding_model(config, model)}/{variant}/{kind}.npy"


def renorm_mean_file(model):
    collection = config["models"][model]["renorm_collection"]
    return f"{RESULTS}/embeddings/{embedding_model(config, model)}/{collection}/corpus.mean.npy"


def collection_entry(wildcards):
    return config["text_collections"][wildcards.benchmark]


def collection_source(wildcards):
    source = config["text_collections"][wildcards.benchmark].get("source")
    return {"source": source_file(source)} if source else {}


def renorm_collection_of(wildcards):
    return wildcards.benchmark


def text_collection_names():
    return names_regex(config.get("text_collections", {}))


def embedding_model_of(wildcards):
    return embedding_model(config, wildcards.model)


def setting_of(wildcards):
    return Setting.parse(wildcards.setting)


def query_variant_of(wildcards):
    return query_variant(config, wildcards.benchmark, setting_of(wildcards).query_language)


def corpus_variants_of(wildcards):
    return corpus_variants(config, wildcards.benchmark, setting_of(wildcards).corpus_language)


def languages_outside_model_of(wildcards):
    """Setting languages the model does not declare: tables flag the row."""
    return languages_outside_model(config, Evaluation(wildcards.benchmark, wildcards.model, setting_of(wildcards)))


def corpus_id_prefixes(wildcards):
    """One-vs-many corpora prefix document ids with their language; single-language corpora do not."""
    if setting_of(wildcards).corpus_language != ONE_VS_MANY:
        return []
    return benchmark_languages(config["benchmarks"][wildcards.benchmark])


def retrieve_inputs(wildcards):
    query_dir = query_variant_of(wildcards)
    spec = model_spec(wildcards)
    if spec.is_dense:
        inputs = {
            "queries": embeddings_file(wildcards.model, query_dir, "queries"),
            "corpus": [embeddings_file(wildcards.model, v, "corpus") for v in corpus_variants_of(wildcards)],
        }
        if spec.renorm:
            inputs["mean"] = renorm_mean_file(wildcards.model)
        return inputs
    return {
        "queries": f"{benchmark_dir(query_dir)}/queries.jsonl",
        "corpus": [f"{benchmark_dir(v)}/corpus.jsonl" for v in corpus_variants_of(wildcards)],
    }


def corpus_languages_of(wildcards):
    setting = setting_of(wildcards)
    if setting.corpus_language == ONE_VS_MANY:
        return benchmark_languages(config["benchmarks"][wildcards.benchmark])
    return [setting.corpus_language]


def score_run_inputs(wildcards):
    query_dir = query_variant_of(wildcards)
    inputs = {
        "qrels": f"{benchmark_dir(query_dir)}/qrels/test.tsv",
        "positions": f"{benchmark_dir(query_dir)}/positions.tsv",
        "run": f"{RESULTS}/runs/{wildcards.benchmark}/{wildcards.model}/{wildcards.setting}.trec",
    }
    corpora = corpus_variants_of(wildcards)
    if model_spec(wildcards).is_dense and len(corpora) == 1:
        inputs["corpus_embeddings"] = embeddings_file(wildcards.model, corpora[0], "corpus")
    return inputs


def evaluations_of(benchmark):
    return [e for e in EVALUATIONS if e.benchmark == benchmark]


def aggregate_file(e, suffix):
    return f"{RESULTS}/aggregates/{e.benchmark}/{e.model}/{e.setting}.{suffix}.tsv"


def summaries_of_benchmark(wildcards):
    return [aggregate_file(e, "summary") for e in evaluations_of(wildcards.benchmark)]


def bins_of_benchmark(wildcards):
    return [aggregate_file(e, "bins") for e in evaluations_of(wildcards.benchmark)]


def panel_keys(wildcards):
    return [(e.model, str(e.setting)) for e in evaluations_of(wildcards.benchmark)]


def evaluations_of_setting(wildcards):
    return [e for e in evaluations_of(wildcards.benchmark) if str(e.setting) == wildcards.setting]


def bins_of_setting(wildcards):
    return [aggregate_file(e, "bins") for e in evaluations_of_setting(wildcards)]


def models_of_setting(wildcards):
    return [e.model for e in evaluations_of_setting(wildcards)]


def one_vs_many_evaluations(benchmark):
    return [e for e in evaluations_of(benchmark) if e.setting.corpus_language == ONE_VS_MANY]


def one_vs_many_runs(wildcards):
    return [
        f"{RESULTS}/runs/{e.benchmark}/{e.model}/{e.setting}.trec"
        for e in one_vs_many_evaluations(wildcards.benchmark)
    ]


def one_vs_many_keys(wildcards):
    return [(e.model, e.setting.query_language) for e in one_vs_many_evaluations(wildcards.benchmark)]


def is_multilingual_table(benchmark):
    return len({str(e.setting) for e in evaluations_of(benchmark)}) > 1


def all_outputs():
    benchmarks = sorted({e.benchmark for e in EVALUATIONS})
    outputs = []
    for name in benchmarks:
        outputs += [f"{RESULTS}/tables/{name}/main.csv", f"{RESULTS}/tables/{name}/main.md"]
        if is_multilingual_table(name):
            # one grid per setting; a grid of every model and setting would be unreadable
            outputs += [f"{RESULTS}/tables/{name}/languages.md"]
        else:
            outputs += [f"{RESULTS}/figures/{name}/grid.png"]
        if one_vs_many_evaluations(name):
            outputs += [f"{RESULTS}/tables/{name}/language_bias.csv", f"{RESULTS}/figures/{name}/language_bias.png"]
        settings = sorted({str(e.setting) for e in evaluations_of(name)})
        if len(settings) > 1:
            outputs += [f"{RESULTS}/figures/{name}/grid-{s}.png" for s in settings]
    variants = sorted({query_variant(config, e.benchmark, e.setting.query_language) for e in EVALUATIONS})
    outputs += [f"{RESULTS}/figures/{v}/positions.png" for v in variants]
    outputs += [f"{RESULTS}/figures/{e.benchmark}/{e.model}/{e.setting}.png" for e in EVALUATIONS]
    return outputs


# --- published results, bootstrap intervals and paper tables (rules/paper.smk) ---

check_paper_config(config)

PUBLISHED = config.get("published", {}) or {}
PAPER_TABLES = config.get("paper_tables", {}) or {}


def bootstraps_of_benchmark(wildcards):
    return [aggregate_file(e, "bootstrap") for e in evaluations_of(wildcards.benchmark)]


def bootstrap_bins_of_benchmark(wildcards):
    return [aggregate_file(e, "bootstrap_bins") for e in evaluations_of(wildcards.benchmark)]


def bootstrap_bins_of_setting(wildcards):
    return [aggregate_file(e, "bootstrap_bins") for e in evaluations_of_setting(wildcards)]


def published_path(name):
    """The file a 'published' entry reads: its source's fetched copy, or its local path."""
    entry = PUBLISHED[name]
    if "source" in entry:
        return source_file(entry["source"])
    return entry["path"]


def published_entry(wildcards):
    return PUBLISHED[wildcards.published]


def published_input(wildcards):
    return published_path(wildcards.published)


def paper_table_entry(wildcards):
    return PAPER_TABLES[wildcards.table]


def paper_table_evaluations(wildcards):
    benchmarks = PAPER_TABLES[wildcards.table].get("benchmarks", [])
    return [e for e in EVALUATIONS if e.benchmark in benchmarks]


def paper_table_summaries(wildcards):
    return [aggregate_file(e, "summary") for e in paper_table_evaluations(wildcards)]


def paper_table_summary_keys(wildcards):
    return [[e.benchmark, e.model, str(e.setting)] for e in paper_table_evaluations(wildcards)]


def paper_table_published_files(wildcards):
    return [published_path(name) for name in PAPER_TABLES[wildcards.table].get("published", [])]


def paper_table_published(wildcards):
    return {name: PUBLISHED[name] for name in PAPER_TABLES[wildcards.table].get("published", [])}


def paper_table_reference(wildcards):
    name = PAPER_TABLES[wildcards.table].get("reference")
    return config.get("references", {}).get(name, {}) if name else {}


def paper_table_files(table):
    directory = f"{RESULTS}/tables/paper/{table}"
    return {
        "settings_csv": f"{directory}/settings.csv",
        "settings_md": f"{directory}/settings.md",
        "settings_tex": f"{directory}/settings.tex",
        "ranking_csv": f"{directory}/ranking.csv",
        "ranking_md": f"{directory}/ranking.md",
        "ranking_tex": f"{directory}/ranking.tex",
        "correlation_csv": f"{directory}/correlation.csv",
        "position_bias_csv": f"{directory}/position_bias.csv",
        "position_bias_md": f"{directory}/position_bias.md",
        "position_bias_tex": f"{directory}/position_bias.tex",
    }


def paper_outputs():
    outputs = []
    for name in PUBLISHED:
        outputs += [f"{RESULTS}/tables/published/{name}/main.csv", f"{RESULTS}/tables/published/{name}/main.md"]
    for table in PAPER_TABLES:
        outputs += list(paper_table_files(table).values())
    return outputs
