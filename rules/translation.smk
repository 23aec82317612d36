# Translated benchmarks (PosIR section 3.4, Appendix C): builder 'translation' entries, their optional
# LLM quality judge, and tables comparing translations of the same source.


rule translate_benchmark:
    input:
        unpack(translation_inputs),
    output:
        **benchmark_outputs("{benchmark}-{language}", extra=["fixes.tsv", "translation.tsv"]),
    log:
        f"{RESULTS}/logs/translate_benchmark/{{benchmark}}-{{language}}.log",
    benchmark:
        f"{RESULTS}/timing/translate_benchmark/{{benchmark}}-{{language}}.tsv"
    wildcard_constraints:
        benchmark=names_with_builder(TRANSLATION),
    conda:
        "../envs/translation.yaml"
    # apertium is a pipe of a dozen programs running at once: 1.8 cores busy while it translates (measured)
    threads: 2
    # Peak RSS measured, apertium's processes included: 372 MB translating squad-long (2 MB of text).
    resources:
        mem_mb=1000,
        runtime=120,
    params:
        entry=config_value("benchmarks/{benchmark}"),
        separator=translation_separator,
        llm=translation_llm,
        cache=translation_cache_of,
        metrics=POSITION_CONFIG,
    script:
        "../scripts/translate_benchmark.py"


rule judge_translation:
    input:
        source=translation_source_corpus,
        corpus=f"{RESULTS}/benchmarks/{{benchmark}}-{{language}}/{fmt.CORPUS}",
        documents=f"{RESULTS}/benchmarks/{{benchmark}}-{{language}}/{fmt.DOCUMENTS}",
    output:
        judged=f"{RESULTS}/translation/{{benchmark}}-{{language}}/judge.tsv",
        usage=f"{RESULTS}/translation/{{benchmark}}-{{language}}/judge.usage.json",
    log:
        f"{RESULTS}/logs/judge_translation/{{benchmark}}-{{language}}.log",
    benchmark:
        f"{RESULTS}/timing/judge_translation/{{benchmark}}-{{language}}.tsv"
    wildcard_constraints:
        benchmark=names_with_builder(TRANSLATION),
    conda:
        "../envs/translation.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=120,
    params:
        entry=config_value("benchmarks/{benchmark}"),
        llm=judge_llm,
    script:
        "../scripts/judge_translation.py"


rule translation_judge_table:
    input:
        judged=judge_files,
    output:
        csv=reported(
            f"{RESULTS}/tables/{{benchmark}}/translation_judge.csv", "translation_judge", "Tables", "{benchmark}"
        ),
        markdown=f"{RESULTS}/tables/{{benchmark}}/translation_judge.md",
    log:
        f"{RESULTS}/logs/translation_judge_table/{{benchmark}}.log",
    wildcard_constraints:
        benchmark=names_with_builder(TRANSLATION),
    conda:
        "../envs/translation.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        judged_keys=judge_keys,
    script:
        "../scripts/translation_judge_table.py"


rule translation_comparison:
    input:
        summaries=comparison_summaries,
        cards=comparison_card_files,
    output:
        csv=reported(
            f"{RESULTS}/tables/{{comparison}}/translation_comparison.csv",
            "translation_comparison",
            "Tables",
            "{comparison}",
        ),
        markdown=f"{RESULTS}/tables/{{comparison}}/translation_comparison.md",
    log:
        f"{RESULTS}/logs/translation_comparison/{{comparison}}.log",
    wildcard_constraints:
        comparison=names_regex(TRANSLATION_COMPARISONS),
    conda:
        "../envs/translation.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        rows=comparison_rows_of,
        cards=comparison_cards,
        reference=config_value("translation_comparisons/{comparison}/reference"),
        metrics=TABLE_CONFIG,
    script:
        "../scripts/translation_comparison.py"
