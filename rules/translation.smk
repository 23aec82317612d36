# Translated benchmarks (PosIR section 3.4, Appendix C): builder 'translation' entries, their optional
# LLM quality judge, and tables comparing translations of the same source.


include: "translation_common.smk"


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
    # apertium is a pipe of a dozen programs running at once: 1.8 cores busy while it translates (measured)
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
        source=translation_source_corpus,
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
        cards=comparison_card_files,
    output:
        csv=report(
            f"{RESULTS}/tables/{{comparison}}/translation_comparison.csv",
            caption="../report/translation_comparison.rst",
            category="Tables",
            subcategory="{comparison}",
        ),
        markdown=f"{RESULTS}/tables/{{comparison}}/translation_comparison.md",
    wildcard_constraints:
        comparison=names_regex(TRANSLATION_COMPARISONS),
    params:
        rows=comparison_rows_of,
        cards=comparison_cards,
        reference=comparison_reference,
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
