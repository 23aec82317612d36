# Translated benchmarks (PosIR section 3.4, Appendix C): builder 'translation' entries, their optional
# LLM quality judge, and tables comparing translations of the same source.


rule translate_benchmark:
    input:
        unpack(BENCHMARKS.translation_inputs),
    output:
        **PATHS.benchmark_outputs("{benchmark}-{language}", extra=[FIXES, TRANSLATION_TABLE]),
    log:
        PATHS.log("translate_benchmark", "{benchmark}-{language}"),
    benchmark:
        PATHS.timing("translate_benchmark", "{benchmark}-{language}")
    wildcard_constraints:
        benchmark=PLAN.benchmarks_built_by(TRANSLATION.name),
    priority: TEXTS_PRIORITY
    conda:
        "../envs/translation.yaml"
    # apertium is a pipe of a dozen programs running at once: 1.8 cores busy while it translates (measured)
    threads: 2
    # Peak RSS measured, apertium's processes included: 372 MB translating squad-long (2 MB of text).
    resources:
        mem_mb=1000,
        runtime=120,
    params:
        job=job(BENCHMARKS.translate),
    script:
        "../scripts/translate_benchmark.py"


rule judge_translation:
    input:
        source=BENCHMARKS.translation_source_corpus,
        corpus=PATHS.benchmark_file("{benchmark}-{language}", fmt.CORPUS),
        documents=PATHS.benchmark_file("{benchmark}-{language}", fmt.DOCUMENTS),
    output:
        **PATHS.translation_judge("{benchmark}-{language}"),
    log:
        PATHS.log("judge_translation", "{benchmark}-{language}"),
    benchmark:
        PATHS.timing("judge_translation", "{benchmark}-{language}")
    wildcard_constraints:
        benchmark=PLAN.benchmarks_built_by(TRANSLATION.name),
    conda:
        "../envs/translation.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=120,
    params:
        job=job(BENCHMARKS.judge),
    script:
        "../scripts/judge_translation.py"


JUDGE_FILES = PATHS.outputs("{benchmark}", TRANSLATION_JUDGE_TABLE)


rule translation_judge_table:
    input:
        judged=BENCHMARKS.judge_files,
    output:
        csv=reported(JUDGE_FILES["csv"], "translation_judge", "Tables", "{benchmark}"),
        markdown=JUDGE_FILES["markdown"],
    log:
        PATHS.log("translation_judge_table", "{benchmark}"),
    wildcard_constraints:
        benchmark=PLAN.benchmarks_built_by(TRANSLATION.name),
    conda:
        "../envs/translation.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        job=job(BENCHMARKS.judge_table),
    script:
        "../scripts/translation_judge_table.py"


COMPARISON_FILES = PATHS.outputs("{comparison}", TRANSLATION_COMPARISON_TABLE)


rule translation_comparison:
    input:
        summaries=BENCHMARKS.comparison_summaries,
        cards=BENCHMARKS.comparison_card_files,
    output:
        csv=reported(COMPARISON_FILES["csv"], "translation_comparison", "Tables", "{comparison}"),
        markdown=COMPARISON_FILES["markdown"],
    log:
        PATHS.log("translation_comparison", "{comparison}"),
    conda:
        "../envs/translation.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        job=job(BENCHMARKS.comparison),
    script:
        "../scripts/translation_comparison.py"
