# Glue shared by every rules file, in one place: the config check, path conventions, the shared input functions.
import math
import re
from functools import cache
from pathlib import Path

import yaml
from snakemake.utils import validate

from posir import benchmark as fmt
from posir.builders import BUILDERS, CROSS_LINGUAL, GENERATION, PARALLEL, POSIR_IMPORT, SQUAD, TRANSLATION
from posir.config import (
    ONE_VS_MANY,
    Evaluation,
    Setting,
    benchmark_languages,
    check_references,
    check_schema,
    config_lookup,
    corpus_variants,
    embedding_model,
    evaluations,
    evaluations_by_benchmark,
    is_pipeline,
    languages_outside_model,
    query_variant,
)
from posir.embedding_cache import window_identity
from posir.models.spec import ModelSpec
from posir.scorers.spec import ScorerSpec
from posir.published import check_config as check_paper_config
from posir.sources import Source
from posir.tables import PAPER_TABLE_FILES
from posir.translate.spec import (
    benchmark_separator,
    check_translation_config,
    comparison_rows,
    translation_entries,
    translation_variants,
)

# --- the config: one sentence per problem, then Snakemake's validate fills in the schema's defaults ---------

check_schema(config, yaml.safe_load(open(workflow.source_path("../schemas/config.schema.yaml"))))
validate(config, schema="../schemas/config.schema.yaml")
check_references(config)
check_paper_config(config)
check_translation_config(config)

RESULTS = "results"
PROMPTS = Path(workflow.basedir) / "prompts"
EVALUATIONS = list(evaluations(config))
# per benchmark, in config order: input functions look a benchmark's evaluations up once per job
EVALUATIONS_BY_BENCHMARK = evaluations_by_benchmark(EVALUATIONS)
PIPELINES = config["pipelines"] or {}
PUBLISHED = config["published"] or {}
PAPER_TABLES = config["paper_tables"] or {}
TRANSLATION_COMPARISONS = config["translation_comparisons"] or {}
# Every text a model encoding has embedded, by content hash (posir.embedding_cache); "" turns it off.
EMBEDDING_CACHE = config["embedding_cache"]
TRANSLATION_CACHE = config["translation_cache"]
# Every (scorer, query, document) score of the scorers, by content hash (posir.scorers.cache); "" turns it off.
SCORE_CACHE = config["score_cache"]

# Each rule gets the part of 'metrics' it reads, so that changing the bootstrap reruns no benchmark and no table.
POSITION_CONFIG = {k: config["metrics"][k] for k in ("position_bins", "length_buckets")}
TABLE_CONFIG = {**POSITION_CONFIG, "min_bin_queries": config["metrics"]["min_bin_queries"]}
METRICS_CONFIG = config["metrics"]
SALIENCY = config["analyses"]["saliency"]
REPRESENTATION = config["analyses"]["representation"]


def config_value(path):
    """params/resources: the config value at ``path`` ('models/{model}/mem_mb'), one dict access per key per job."""
    return config_lookup(config, path)


def names_regex(names):
    """A wildcard regex matching exactly ``names``; with none, a regex that matches nothing."""
    names = list(names)
    return "|".join(re.escape(n) for n in names) if names else "(?!x)x"


def names_with_builder(builder):
    """A wildcard regex matching exactly the benchmarks made by ``builder`` (a posir.builders.Builder)."""
    return names_regex(n for n, e in config["benchmarks"].items() if e["builder"] == builder.name)


wildcard_constraints:
    kind="corpus|queries",
    setting="[a-z]{3}-[a-z]{3}",
    language="[a-z]{3}",
    model=names_regex([*config["models"], *PIPELINES]),
    benchmark="[^/]+",
    collection=names_regex(config["text_collections"]),
    text_set="[^/]+",
    source="[^/]+",


# --- paths ------------------------------------------------------------------------------------------


def benchmark_dir(variant):
    return f"{RESULTS}/benchmarks/{variant}"


def collection_dir(collection):
    return f"{RESULTS}/collections/{collection}"


def benchmark_outputs(variant, query_only=False, extra=()):
    """Every file of the benchmark contract (posir.benchmark), as named rule outputs, plus ``extra`` file names."""
    names = fmt.QUERY_ONLY_CONTRACT if query_only else fmt.CONTRACT
    outputs = {name: f"{benchmark_dir(variant)}/{filename}" for name, filename in names.items()}
    outputs.update({Path(filename).stem: f"{benchmark_dir(variant)}/{filename}" for filename in extra})
    return outputs


def source_file(name):
    source = Source.from_config(name, config["sources"][name])
    return f"{RESULTS}/sources/{name}/{source.filename}"


def text_set_file(text_set, kind):
    """The texts of a text set: a benchmark (variant) or a text collection."""
    if text_set in config["text_collections"]:
        return f"{collection_dir(text_set)}/{fmt.CORPUS}"
    return f"{benchmark_dir(text_set)}/{fmt.CORPUS if kind == 'corpus' else fmt.QUERIES}"


def embeddings_file(model, text_set, kind):
    """Embeddings of a text set; a model sharing another entry's embeddings (embeddings_from) reads those."""
    return f"{RESULTS}/embeddings/{embedding_model(config, model)}/{text_set}/{kind}.npy"


def run_file(e):
    return f"{RESULTS}/runs/{e.benchmark}/{e.model}/{e.setting}.trec"


def aggregate_file(e, suffix):
    return f"{RESULTS}/aggregates/{e.benchmark}/{e.model}/{e.setting}.{suffix}.tsv"


def reported(path, caption, category, subcategory, **labels):
    """An output shown in the HTML report (``snakemake --report``), captioned by ``report/<caption>.rst``."""
    return report(
        path, caption=f"../report/{caption}.rst", category=category, subcategory=subcategory, labels=labels or None
    )


# --- sources and benchmarks --------------------------------------------------------------------------


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
        "base_corpus": f"{base}/{fmt.CORPUS}",
        "base_paragraphs": f"{base}/{fmt.PARAGRAPHS}",
        "base_documents": f"{base}/{fmt.DOCUMENTS}",
    }


def collection_source(wildcards):
    source = config["text_collections"][wildcards.collection].get("source")
    return {"source": source_file(source)} if source else {}


def posir_import_files(wildcards):
    from posir.builders.posir_import import ImportSpec

    spec = ImportSpec.from_config(config["benchmarks"][wildcards.benchmark]["posir_import"])
    return {} if spec.download else {k: str(v) for k, v in spec.files().items()}


# --- LLM generation ---------------------------------------------------------------------------------

GENERATION_STAGES = ("corpus", "sample", "queries", "spans", "contrast", "grading", "false_negatives")


def stage_outputs(stage, **files):
    """A generation stage's outputs: its own ``files`` (name -> file name), its drops.tsv and counts.json."""
    directory = f"{RESULTS}/generation/{{benchmark}}/{stage}"
    return {
        **{name: f"{directory}/{filename}" for name, filename in files.items()},
        "drops": f"{directory}/{fmt.DROPS}",
        "counts": f"{directory}/{fmt.COUNTS}",
    }


def prompt_files(name):
    """A prompt and its answer schema, where it has one (a yes/no prompt has none)."""
    schema = PROMPTS / f"{name}.schema.json"
    return [str(PROMPTS / f"{name}.md")] + ([str(schema)] if schema.exists() else [])


def prompts_dir_of(wildcards, input):
    """The folder of the rule's prompt files (inputs, so editing a prompt reruns its stage)."""
    return str(Path(input.prompt[0]).parent)


def llm_answer_settings(wildcards):
    """The llm settings that shape answers; a change reruns the LLM stages (the cache keeps old answers).

    The endpoint itself is read from the config by the scripts, so a local server on another port reruns nothing.
    """
    section = config.get("llm") or {}
    return {k: section.get(k) for k in ("model", "temperature", "max_tokens", "seed")}


def generation_block(wildcards, stage):
    return config["benchmarks"][wildcards.benchmark]["generation"].get(stage) or {}


def stage_scorers(stage):
    """The ``scorers`` entries one generation stage uses (and nothing else of the section)."""

    def scorers(wildcards):
        names = generation_block(wildcards, stage).get("scorers", [])
        return {name: config["scorers"][name] for name in names}

    return scorers


def stage_models(stage):
    """The models: entries one generation stage uses: its bi-encoder scorers' models and its recall model."""

    def models(wildcards):
        block = generation_block(wildcards, stage)
        names = [
            config["scorers"][s]["model"]
            for s in block.get("scorers", [])
            if config["scorers"][s]["backend"] == "bi-encoder"
        ]
        names += [block["recall_model"]] if block.get("recall_model") else []
        return {name: config["models"][name] for name in names}

    return models


def scorer_mem_mb(wildcards):
    block = config["benchmarks"][wildcards.benchmark]["generation"]
    names = {n for stage in ("contrast", "false_negatives") for n in (block.get(stage) or {}).get("scorers", [])}
    return max([config["scorers"][n].get("mem_mb", 3000) for n in names] + [3000])


def generation_stage_dirs(wildcards):
    return [f"{RESULTS}/generation/{wildcards.benchmark}/{s}" for s in GENERATION_STAGES]


def generation_counts(wildcards):
    return [f"{d}/{fmt.COUNTS}" for d in generation_stage_dirs(wildcards)]


def generation_drops(wildcards):
    return [f"{d}/{fmt.DROPS}" for d in generation_stage_dirs(wildcards)]


# --- translation ---------------------------------------------------------------------------------------


def translation_spec(wildcards):
    return config["benchmarks"][wildcards.benchmark]["translations"][wildcards.language]


def translation_source_dir(wildcards):
    """The variant translated: the 'from' benchmark in its 'from_language'."""
    entry = config["benchmarks"][wildcards.benchmark]
    return benchmark_dir(query_variant(config, entry["from"], entry["from_language"]))


def translation_source_corpus(wildcards):
    return f"{translation_source_dir(wildcards)}/{fmt.CORPUS}"


def translation_inputs(wildcards):
    source = translation_source_dir(wildcards)
    inputs = {name: f"{source}/{filename}" for name, filename in fmt.CONTRACT.items() if name not in ("drops", "card")}
    spec = translation_spec(wildcards)
    if spec["backend"] == "parallel":
        inputs["parallel_source"] = source_file(spec["source_file"])
        inputs["parallel_target"] = source_file(spec["target_file"])
    return inputs


def translation_separator(wildcards):
    return benchmark_separator(config, wildcards.benchmark)


def translation_llm(wildcards):
    """The llm section, only for variants that call an LLM (so editing it reruns only those)."""
    entry = config["benchmarks"][wildcards.benchmark]
    spec = translation_spec(wildcards)
    uses_llm = spec["backend"] == "llm" or entry["filters"]["refusal"]["llm_confirm"]
    return {**(config.get("llm") or {}), **spec.get("llm", {})} if uses_llm else {}


def translation_cache_of(wildcards):
    return TRANSLATION_CACHE if translation_spec(wildcards)["backend"] == "apertium" else ""


def judge_llm(wildcards):
    return {**(config.get("llm") or {}), **translation_spec(wildcards).get("llm", {})}


def judged_languages(benchmark):
    return [lang for name, lang in translation_variants(config) if name == benchmark]


def judge_files(wildcards):
    return [
        f"{RESULTS}/translation/{wildcards.benchmark}-{lang}/judge.tsv"
        for lang in judged_languages(wildcards.benchmark)
    ]


def judge_keys(wildcards):
    entry = config["benchmarks"][wildcards.benchmark]
    return [
        [wildcards.benchmark, lang, entry["translations"][lang]["backend"]]
        for lang in judged_languages(wildcards.benchmark)
    ]


def comparison_summaries(wildcards):
    return [
        f"{RESULTS}/aggregates/{r['benchmark']}/{r['model']}/{r['setting']}.summary.tsv"
        for r in comparison_rows(config, wildcards.comparison)
    ]


def comparison_cards(wildcards):
    language = TRANSLATION_COMPARISONS[wildcards.comparison]["language"]
    return {
        b: f"{benchmark_dir(f'{b}-{language}')}/{fmt.CARD}"
        for b in TRANSLATION_COMPARISONS[wildcards.comparison]["translations"]
    }


def comparison_card_files(wildcards):
    return list(comparison_cards(wildcards).values())


def comparison_rows_of(wildcards):
    return comparison_rows(config, wildcards.comparison)


# --- resources: measured peaks, twice over (docs/cluster.md, "Where the resources come from") --------------


def input_scaled_mem_mb(base_mb, per_input_mb):
    """mem_mb of a step whose peak RSS grows with its input: twice (base_mb + per_input_mb x input MB), in
    100 MB steps, at least 1000 MB. Evaluated when the job is ready, so input.size_mb is the real size."""

    def mem_mb(wildcards, input):
        return max(1000, 100 * math.ceil(2 * (base_mb + per_input_mb * input.size_mb) / 100))

    return mem_mb


# --- encoding and retrieval ----------------------------------------------------------------------------


@cache
def model_spec_named(name):
    """A model entry's checked spec, built once per model (not once per job: the schema check is the slow part)."""
    return ModelSpec.from_config(name, config["models"][name])


def model_spec(wildcards):
    return model_spec_named(wildcards.model)


def encode_texts_input(wildcards):
    return text_set_file(wildcards.text_set, wildcards.kind)


def encode_gpu(wildcards):
    return int(model_spec(wildcards).uses_gpu)


def retrieve_mem_mb(wildcards, input):
    """Peak RSS measured: 70-90 MB of Python, plus up to 8 MB per MB of embeddings (dense: 188 MB for 17 MB)
    or 45 MB per MB of corpus text (BM25 keeps its index in Python objects: 194 MB for 3 MB)."""
    return input_scaled_mem_mb(100, 8 if model_spec(wildcards).is_dense else 45)(wildcards, input)


def renorm_mean_file(model):
    collection = config["models"][model]["renorm_collection"]
    return f"{RESULTS}/embeddings/{embedding_model(config, model)}/{collection}/corpus.mean.npy"


def embedding_model_of(wildcards):
    return embedding_model(config, wildcards.model)


def setting_of(wildcards):
    return Setting.parse(wildcards.setting)


def query_variant_of(wildcards):
    return query_variant(config, wildcards.benchmark, setting_of(wildcards).query_language)


def corpus_variants_of(wildcards):
    return corpus_variants(config, wildcards.benchmark, setting_of(wildcards).corpus_language)


def corpus_languages_of(wildcards):
    setting = setting_of(wildcards)
    if setting.corpus_language == ONE_VS_MANY:
        return benchmark_languages(config["benchmarks"][wildcards.benchmark])
    return [setting.corpus_language]


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
        "queries": f"{benchmark_dir(query_dir)}/{fmt.QUERIES}",
        "corpus": [f"{benchmark_dir(v)}/{fmt.CORPUS}" for v in corpus_variants_of(wildcards)],
    }


# --- reranking pipelines ---------------------------------------------------------------------------------


def pipeline_entry(wildcards):
    return PIPELINES[wildcards.model]


def second_stage(wildcards):
    return config["scorers"][PIPELINES[wildcards.model]["second_stage"]]


def rerank_inputs(wildcards):
    query_dir = query_variant_of(wildcards)
    first_stage = PIPELINES[wildcards.model]["first_stage"]
    return {
        "first_stage": f"{RESULTS}/runs/{wildcards.benchmark}/{first_stage}/{wildcards.setting}.trec",
        "queries": f"{benchmark_dir(query_dir)}/{fmt.QUERIES}",
        "positions": f"{benchmark_dir(query_dir)}/{fmt.POSITIONS}",
        "corpus": [f"{benchmark_dir(v)}/{fmt.CORPUS}" for v in corpus_variants_of(wildcards)],
        "windows_encoded_by": chunked_windows_of(wildcards),
        "prompts": second_stage_prompt_files(wildcards),
    }


def second_stage_prompt_files(wildcards):
    """The prompt files an LLM second stage reads (inputs, so editing one reruns its reranks); its cache keys
    on the prompt's hash, so a rerun asks only for the pairs the new prompt has not seen."""
    name = PIPELINES[wildcards.model]["second_stage"]
    if second_stage(wildcards)["backend"] != "llm-grade":
        return []
    spec = ScorerSpec.from_config(name, config["scorers"][name])
    return prompt_files(spec.prompt) + prompt_files(spec.grade_prompt)


def chunked_windows_of(wildcards):
    """Corpus embeddings of a chunked entry evaluated beside the pipeline that hold the very windows its bi-encoder
    second stage reads (same window identity, window and stride).

    An ordering edge only: the rerank job then finds every window in the embedding cache, where it would
    otherwise encode the same windows at the same time as that entry's encode job (on 2 cores, me5-small's
    squad-long windows twice over).
    """
    scorer = second_stage(wildcards)
    if scorer["backend"] != "bi-encoder":
        return []
    reader = model_spec_named(scorer["model"])
    wanted = (window_identity(reader), scorer.get("window_tokens"), scorer.get("stride_tokens"))
    chunked = sorted(
        {
            e.model
            for e in evaluations_of_setting(wildcards)
            if e.model in config["models"] and model_spec_named(e.model).is_chunked
        }
    )
    return [
        embeddings_file(model, variant, "corpus")
        for model in chunked
        if (window_identity(spec := model_spec_named(model)), spec.window_tokens, spec.stride_tokens) == wanted
        for variant in corpus_variants_of(wildcards)
    ]


def second_stage_models(wildcards):
    """The models: entry a bi-encoder second stage embeds with (and nothing else of the section)."""
    scorer = second_stage(wildcards)
    return {scorer["model"]: config["models"][scorer["model"]]} if scorer["backend"] == "bi-encoder" else {}


def second_stage_llm(wildcards):
    """The answer-shaping llm settings, for LLM second stages only (editing them reruns only those)."""
    return llm_answer_settings(wildcards) if second_stage(wildcards)["backend"] == "llm-grade" else {}


def second_stage_mem_mb(wildcards):
    scorer = second_stage(wildcards)
    if scorer["backend"] == "bi-encoder":
        return max(scorer["mem_mb"], config["models"][scorer["model"]]["mem_mb"])
    return scorer["mem_mb"]


def rerank_mem_mb(wildcards, input):
    """The second stage's model (its mem_mb) plus the first-stage run and the pairs held in memory: measured
    2200 MB peak for 318 MB of input (squad-long, minilm-l6 first stage, depth 100), about 5.3 MB per MB above
    the model; 6 MB per MB here. The chunked entry's embeddings (an ordering input, never read) do not count."""
    unread = sum(Path(p).stat().st_size for p in input.windows_encoded_by if Path(p).exists()) / 2**20
    return second_stage_mem_mb(wildcards) + 100 * math.ceil(6 * max(input.size_mb - unread, 0) / 100)


def second_stage_gpu(wildcards):
    scorer = second_stage(wildcards)
    device = (
        config["models"][scorer["model"]].get("device") if scorer["backend"] == "bi-encoder" else scorer.get("device")
    )
    return int(str(device or "cpu").startswith("cuda"))


# --- evaluation ------------------------------------------------------------------------------------------


def score_run_inputs(wildcards):
    query_dir = query_variant_of(wildcards)
    run = f"{RESULTS}/runs/{wildcards.benchmark}/{wildcards.model}/{wildcards.setting}"
    inputs = {
        "qrels": f"{benchmark_dir(query_dir)}/{fmt.QRELS}",
        "positions": f"{benchmark_dir(query_dir)}/{fmt.POSITIONS}",
        "run": f"{run}.trec",
    }
    if is_pipeline(config, wildcards.model):
        inputs["evaluated"] = f"{run}.queries.tsv"  # a pipeline may rerank a sample of the queries
        return inputs
    corpora = corpus_variants_of(wildcards)
    if model_spec(wildcards).is_dense and len(corpora) == 1:
        inputs["corpus_embeddings"] = embeddings_file(wildcards.model, corpora[0], "corpus")
    return inputs


def languages_outside_model_of(wildcards):
    """Setting languages the model does not declare: tables flag the row."""
    return languages_outside_model(config, Evaluation(wildcards.benchmark, wildcards.model, setting_of(wildcards)))


def evaluations_of(benchmark):
    return EVALUATIONS_BY_BENCHMARK.get(benchmark, [])


def evaluations_of_setting(wildcards):
    return [e for e in evaluations_of(wildcards.benchmark) if str(e.setting) == wildcards.setting]


def aggregates_of_benchmark(suffix):
    def files(wildcards):
        return [aggregate_file(e, suffix) for e in evaluations_of(wildcards.benchmark)]

    return files


def aggregates_of_setting(suffix):
    def files(wildcards):
        return [aggregate_file(e, suffix) for e in evaluations_of_setting(wildcards)]

    return files


def panel_keys(wildcards):
    return [(e.model, str(e.setting)) for e in evaluations_of(wildcards.benchmark)]


def models_of_setting(wildcards):
    return [e.model for e in evaluations_of_setting(wildcards)]


def one_vs_many_evaluations(benchmark):
    return [e for e in evaluations_of(benchmark) if e.setting.corpus_language == ONE_VS_MANY]


def one_vs_many_runs(wildcards):
    return [run_file(e) for e in one_vs_many_evaluations(wildcards.benchmark)]


def one_vs_many_keys(wildcards):
    return [(e.model, e.setting.query_language) for e in one_vs_many_evaluations(wildcards.benchmark)]


def is_multilingual_table(benchmark):
    return len({str(e.setting) for e in evaluations_of(benchmark)}) > 1


# --- published results and paper tables -------------------------------------------------------------------


def published_path(name):
    """The file a 'published' entry reads: its source's fetched copy, or its local path."""
    entry = PUBLISHED[name]
    if "source" in entry:
        return source_file(entry["source"])
    return entry["path"]


def published_input(wildcards):
    return published_path(wildcards.published)


def paper_table_evaluations(wildcards):
    benchmarks = PAPER_TABLES[wildcards.table]["benchmarks"]
    return [e for e in EVALUATIONS if e.benchmark in benchmarks]


def paper_table_summaries(wildcards):
    return [aggregate_file(e, "summary") for e in paper_table_evaluations(wildcards)]


def paper_table_summary_keys(wildcards):
    return [[e.benchmark, e.model, str(e.setting)] for e in paper_table_evaluations(wildcards)]


def paper_table_published_files(wildcards):
    return [published_path(name) for name in PAPER_TABLES[wildcards.table]["published"]]


def paper_table_published(wildcards):
    return {name: PUBLISHED[name] for name in PAPER_TABLES[wildcards.table]["published"]}


def paper_table_reference(wildcards):
    name = PAPER_TABLES[wildcards.table].get("reference")
    return config["references"].get(name, {}) if name else {}


def paper_table_files(table):
    return {key: f"{RESULTS}/tables/paper/{table}/{filename}" for key, filename in PAPER_TABLE_FILES.items()}


# --- what 'snakemake' builds --------------------------------------------------------------------------------


# --- paired tests between models, analyses ---------------------------------------------------------------


def compared_models(benchmark, setting):
    """The models of a (benchmark, setting) that answer every query; a pipeline reranking a sample is left out."""
    return [
        e.model
        for e in evaluations_of(benchmark)
        if str(e.setting) == setting and not (PIPELINES.get(e.model) or {}).get("sample")
    ]


def compared_scores(wildcards):
    return [
        f"{RESULTS}/scores/{wildcards.benchmark}/{m}/{wildcards.setting}.tsv"
        for m in compared_models(wildcards.benchmark, wildcards.setting)
    ]


def compared_names(wildcards):
    return compared_models(wildcards.benchmark, wildcards.setting)


def significance_outputs():
    pairs = sorted({(e.benchmark, str(e.setting)) for e in EVALUATIONS})
    return [f"{RESULTS}/tables/{b}/significance/{s}.md" for b, s in pairs if len(compared_models(b, s)) > 1]


def analysis_benchmark_files(wildcards):
    directory = benchmark_dir(wildcards.benchmark)
    return {
        "positions": f"{directory}/{fmt.POSITIONS}",
        "documents": f"{directory}/{fmt.DOCUMENTS}",
        "queries": f"{directory}/{fmt.QUERIES}",
        "corpus": f"{directory}/{fmt.CORPUS}",
    }


def analysis_mem_mb(extra):
    def mem_mb(wildcards):
        return config["models"][wildcards.model]["mem_mb"] + extra

    return mem_mb


def analyses_outputs():
    outputs = [
        f"{RESULTS}/figures/{benchmark}/saliency-{model}.png"
        for benchmark, models in (SALIENCY["runs"] or {}).items()
        for model in models
    ]
    outputs += [
        f"{RESULTS}/figures/{benchmark}/segments-{model}.png"
        for benchmark, models in (REPRESENTATION["runs"] or {}).items()
        for model in models
    ]
    return outputs


def evaluation_outputs():
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


def paper_outputs():
    outputs = []
    for name in PUBLISHED:
        outputs += [f"{RESULTS}/tables/published/{name}/main.csv", f"{RESULTS}/tables/published/{name}/main.md"]
    for table in PAPER_TABLES:
        outputs += list(paper_table_files(table).values())
    return outputs


def translation_outputs():
    # like every other benchmark, a translation is built by 'all' only when something evaluates it
    evaluated = {e.benchmark for e in EVALUATIONS}
    outputs = [
        f"{benchmark_dir(f'{name}-{lang}')}/{fmt.CARD}"
        for name, lang in translation_variants(config)
        if name in evaluated
    ]
    for name, parsed in translation_entries(config).items():
        if parsed.judge is not None:
            outputs += [
                f"{RESULTS}/tables/{name}/translation_judge.csv",
                f"{RESULTS}/tables/{name}/translation_judge.md",
            ]
    for name in TRANSLATION_COMPARISONS:
        outputs += [
            f"{RESULTS}/tables/{name}/translation_comparison.csv",
            f"{RESULTS}/tables/{name}/translation_comparison.md",
        ]
    return outputs
