# Translated benchmarks (PosIR section 3.4, Appendix C): builder 'translation' entries, their optional
# LLM quality judge, and tables comparing translations of the same source.
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
    outputs = [f"{RESULTS}/benchmarks/{name}-{lang}/card.json" for name, lang in translation_variants(config)]
    for name, parsed in translation_entries(config).items():
        if parsed.judge is not None:
            outputs += [f"{RESULTS}/tables/{name}/translation_judge.csv", f"{RESULTS}/tables/{name}/translation_judge.md"]
    for name in TRANSLATION_COMPARISONS:
        outputs += [f"{RESULTS}/tables/{name}/translation_comparison.csv",
                    f"{RESULTS}/tables/{name}/translation_comparison.md"]
    return outputs


def names_of(mapping):
    return "|".join(re.escape(n) for n in mapping) if mapping else "(?!x)x"


rule translate_benchmark:
    input:
        unpack(translation_inputs),
    output:
        corpus=f"{RESULTS}/benchmarks/{{benchmark}}-{{language}}/corpus.jsonl",
        queries=f"{RESULTS}/benchmarks/{{benchmark}}-{{language}}/queries.jsonl",
        qrels=f"{RESULTS}/benchmarks/{{benchmark}}-{{language}}/qrels/test.tsv",
        positions=f"{RESULTS}/benchmarks/{{benchmark}}-{{language}}/positions.tsv",
        drops=f"{RESULTS}/benchmarks/{{benchmark}}-{{language}}/drops.tsv",
        card=f"{RESULTS}/benchmarks/{{benchmark}}-{{language}}/card.json",
        documents=f"{RESULTS}/benchmarks/{{benchmark}}-{{language}}/documents.tsv",
        fixes=f"{RESULTS}/benchmarks/{{benchmark}}-{{language}}/fixes.tsv",
        translation=f"{RESULTS}/benchmarks/{{benchmark}}-{{language}}/translation.tsv",
    wildcard_constraints:
        benchmark=names_with_builder(TRANSLATION_BUILDER),
    params:
        entry=benchmark_entry,
        separator=translation_separator,
        llm=translation_llm,
        cache=translation_cache_of,
        metrics=POSITION_CONFIG,
    log:
        f"{RESULTS}/logs/translate_benchmark/{{benchmark}}-{{language}}.log",
    benchmark:
        f"{RESULTS}/timing/translate_benchmark/{{benchmark}}-{{language}}.tsv"
    # apertium is a pipe of a dozen programs running at once: about two cores busy while it translates
    threads: 2
    resources:
        mem_mb=3000,
        runtime=120,
    conda:
        "../envs/translation.yaml"
    script:
        "../scripts/translate_benchmark.py"


rule judge_translation:
    input:
        source=lambda w: f"{translation_source_dir(w)}/corpus.jsonl",
        corpus=f"{RESULTS}/benchmarks/{{benchmark}}-{{language}}/corpus.jsonl",
        documents=f"{RESULTS}/benchmarks/{{benchmark}}-{{language}}/documents.tsv",
    output:
        judged=f"{RESULTS}/translation/{{benchmark}}-{{language}}/judge.tsv",
        usage=f"{RESULTS}/translation/{{benchmark}}-{{language}}/judge.usage.json",
    wildcard_constraints:
        benchmark=names_with_builder(TRANSLATION_BUILDER),
    params:
        entry=benchmark_entry,
        llm=judge_llm,
    log:
        f"{RESULTS}/logs/judge_translation/{{benchmark}}-{{language}}.log",
    benchmark:
        f"{RESULTS}/timing/judge_translation/{{benchmark}}-{{language}}.tsv"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=120,
    conda:
        "../envs/translation.yaml"
    script:
        "../scripts/judge_translation.py"


rule translation_judge_table:
    input:
        judged=judge_files,
    output:
        csv=report(
            f"{RESULTS}/tables/{{benchmark}}/translation_judge.csv",
            caption="../report/translation_judge.rst",
            category="Tables",
            subcategory="{benchmark}",
        ),
        markdown=f"{RESULTS}/tables/{{benchmark}}/translation_judge.md",
    wildcard_constraints:
        benchmark=names_with_builder(TRANSLATION_BUILDER),
    params:
        judged_keys=judge_keys,
    log:
        f"{RESULTS}/logs/translation_judge_table/{{benchmark}}.log",
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../envs/translation.yaml"
    script:
        "../scripts/translation_judge_table.py"


rule translation_comparison:
    input:
        summaries=comparison_summaries,
        cards=lambda w: list(comparison_cards(w).values()),
    output:
        csv=report(
            f"{RESULTS}/tables/{{comparison}}/translation_comparison.csv",
            caption="../report/translation_comparison.rst",
            category="Tables",
            subcategory="{comparison}",
        ),
        markdown=f"{RESULTS}/tables/{{comparison}}/translation_comparison.md",
    wildcard_constraints:
        comparison=names_of(TRANSLATION_COMPARISONS),
    params:
        rows=lambda w: comparison_rows(config, w.comparison),
        cards=comparison_cards,
        reference=lambda w: TRANSLATION_COMPARISONS[w.comparison]["reference"],
        metrics=METRICS_CONFIG,
    log:
        f"{RESULTS}/logs/translation_comparison/{{comparison}}.log",
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../envs/translation.yaml"
    script:
        "../scripts/translation_comparison.py"
