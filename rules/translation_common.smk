# Config checks, paths and input functions of the translation rules (rules/translation.smk).
from posir.config import TRANSLATION_BUILDER
from posir.translate.spec import (
    benchmark_separator,
    check_translation_config,
    comparison_rows,
    translation_entries,
    translation_variants,
)

check_translation_config(config)

TRANSLATION_COMPARISONS = config.get("translation_comparisons", {}) or {}
TRANSLATION_CACHE = config.get("translation_cache", f"{RESULTS}/translation-cache.sqlite")


def translation_spec(wildcards):
    return config["benchmarks"][wildcards.benchmark]["translations"][wildcards.language]


def translation_source_dir(wildcards):
    """The variant translated: the 'from' benchmark in its 'from_language'."""
    entry = config["benchmarks"][wildcards.benchmark]
    return benchmark_dir(query_variant(config, entry["from"], entry.get("from_language", "eng")))


def translation_inputs(wildcards):
    source = translation_source_dir(wildcards)
    inputs = {
        "corpus": f"{source}/corpus.jsonl",
        "queries": f"{source}/queries.jsonl",
        "qrels": f"{source}/qrels/test.tsv",
        "positions": f"{source}/positions.tsv",
        "documents": f"{source}/documents.tsv",
    }
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
    uses_llm = spec["backend"] == "llm" or entry.get("filters", {}).get("refusal", {}).get("llm_confirm", False)
    return {**(config.get("llm") or {}), **spec.get("llm", {})} if uses_llm else {}


def translation_cache_of(wildcards):
    return TRANSLATION_CACHE if translation_spec(wildcards)["backend"] == "apertium" else ""


def judge_llm(wildcards):
    return {**(config.get("llm") or {}), **translation_spec(wildcards).get("llm", {})}


def judged_languages(benchmark):
    return [lang for name, lang in translation_variants(config) if name == benchmark]


def judge_files(wildcards):
    return [f"{RESULTS}/translation/{wildcards.benchmark}-{lang}/judge.tsv" for lang in judged_languages(wildcards.benchmark)]


def judge_keys(wildcards):
    entry = config["benchmarks"][wildcards.benchmark]
    return [[wildcards.benchmark, lang, entry["translations"][lang]["backend"]] for lang in judged_languages(wildcards.benchmark)]


def comparison_summaries(wildcards):
    return [f"{RESULTS}/aggregates/{r['benchmark']}/{r['model']}/{r['setting']}.summary.tsv"
            for r in comparison_rows(config, wildcards.comparison)]


def comparison_cards(wildcards):
    language = TRANSLATION_COMPARISONS[wildcards.comparison]["language"]
    return {b: f"{RESULTS}/benchmarks/{b}-{language}/card.json" for b in TRANSLATION_COMPARISONS[wildcards.comparison]["translations"]}


def translation_outputs():
    # like every other benchmark, a translation is built by 'all' only when something evaluates it
    evaluated = {e.benchmark for e in EVALUATIONS}
    outputs = [f"{RESULTS}/benchmarks/{name}-{lang}/card.json" for name, lang in translation_variants(config)
               if name in evaluated]
    for name, parsed in translation_entries(config).items():
        if parsed.judge is not None:
            outputs += [f"{RESULTS}/tables/{name}/translation_judge.csv", f"{RESULTS}/tables/{name}/translation_judge.md"]
    for name in TRANSLATION_COMPARISONS:
        outputs += [f"{RESULTS}/tables/{name}/translation_comparison.csv",
                    f"{RESULTS}/tables/{name}/translation_comparison.md"]
    return outputs


def translation_source_corpus(wildcards):
    return f"{translation_source_dir(wildcards)}/corpus.jsonl"


def comparison_card_files(wildcards):
    return list(comparison_cards(wildcards).values())


def comparison_rows_of(wildcards):
    return comparison_rows(config, wildcards.comparison)


def comparison_reference(wildcards):
    return TRANSLATION_COMPARISONS[wildcards.comparison]["reference"]
