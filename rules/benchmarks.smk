# Benchmarks built from checksummed sources (SQuAD-format files), their per-language variants, the
# evidence-position figure of each, and text collections. Every benchmark-producing rule declares its outputs
# with PATHS.benchmark_outputs(): the files of the contract (posir.benchmark), written by posir.benchmark.finish.


rule build_benchmark:
    input:
        unpack(BENCHMARKS.sources_of),
    output:
        **PATHS.benchmark_outputs("{benchmark}", extra=[fmt.PARAGRAPHS]),
    log:
        PATHS.log("build_benchmark", "{benchmark}"),
    benchmark:
        PATHS.timing("build_benchmark", "{benchmark}")
    wildcard_constraints:
        benchmark=PLAN.benchmarks_built_by(SQUAD.name),
    priority: TEXTS_PRIORITY
    conda:
        "../envs/benchmarks.yaml"
    threads: 1
    # Peak RSS measured: 137 MB from SQuAD dev (4.9 MB of JSON); grows with the source file.
    resources:
        mem_mb=input_scaled_mem_mb(100, 15),
        runtime=30,
    params:
        job=job(BENCHMARKS.build),
    script:
        "../scripts/build_benchmark.py"


rule build_paragraph_benchmark:
    input:
        unpack(BENCHMARKS.sources_of),
    output:
        **PATHS.benchmark_outputs("{benchmark}"),
    log:
        PATHS.log("build_paragraph_benchmark", "{benchmark}"),
    benchmark:
        PATHS.timing("build_paragraph_benchmark", "{benchmark}")
    wildcard_constraints:
        benchmark=PLAN.benchmarks_built_by(PARAGRAPHS.name),
    priority: TEXTS_PRIORITY
    conda:
        "../envs/benchmarks.yaml"
    threads: 1
    # Peak RSS measured: 190 MB from SQuAD v1.1 dev (4.9 MB of JSON); grows with the source files.
    resources:
        mem_mb=input_scaled_mem_mb(100, 15),
        runtime=30,
    params:
        job=job(BENCHMARKS.build),
    script:
        "../scripts/build_paragraph_benchmark.py"


rule import_posq_benchmark:
    input:
        unpack(BENCHMARKS.sources_of),
    output:
        **PATHS.benchmark_outputs("{benchmark}"),
    log:
        PATHS.log("import_posq_benchmark", "{benchmark}"),
    benchmark:
        PATHS.timing("import_posq_benchmark", "{benchmark}")
    wildcard_constraints:
        benchmark=PLAN.benchmarks_built_by(POSQ_IMPORT.name),
    priority: TEXTS_PRIORITY
    conda:
        "../envs/benchmarks.yaml"
    threads: 1
    # The rows are read whole (FineWeb-PosQ's 13,902 passages: about 100 MB of text).
    resources:
        mem_mb=input_scaled_mem_mb(500, 10),
        runtime=60,
    params:
        job=job(BENCHMARKS.posq_import),
    script:
        "../scripts/import_posq_benchmark.py"


rule build_cross_lingual_variant:
    input:
        unpack(BENCHMARKS.cross_lingual_inputs),
    output:
        **PATHS.benchmark_outputs("{benchmark}-{language}", query_only=True),
    log:
        PATHS.log("build_cross_lingual_variant", "{benchmark}-{language}"),
    wildcard_constraints:
        benchmark=PLAN.benchmarks_built_by(CROSS_LINGUAL.name),
    priority: TEXTS_PRIORITY
    conda:
        "../envs/benchmarks.yaml"
    threads: 1
    # Peak RSS measured: 82 MB or less for 3-4 MB of benchmark files.
    resources:
        mem_mb=input_scaled_mem_mb(100, 15),
        runtime=15,
    params:
        job=job(BENCHMARKS.build),
    script:
        "../scripts/build_cross_lingual_variant.py"


rule build_parallel_variant:
    input:
        unpack(BENCHMARKS.variant_sources),
    output:
        **PATHS.benchmark_outputs("{benchmark}-{language}"),
    log:
        PATHS.log("build_parallel_variant", "{benchmark}-{language}"),
    wildcard_constraints:
        benchmark=PLAN.benchmarks_built_by(PARALLEL.name),
    priority: TEXTS_PRIORITY
    conda:
        "../envs/benchmarks.yaml"
    threads: 1
    # Peak RSS measured: 82 MB or less for 3-4 MB of benchmark files.
    resources:
        mem_mb=input_scaled_mem_mb(100, 15),
        runtime=15,
    params:
        job=job(BENCHMARKS.build),
    script:
        "../scripts/build_parallel_variant.py"


rule plot_positional_distribution:
    input:
        positions=PATHS.benchmark_file("{benchmark}", fmt.POSITIONS),
    output:
        figure=reported(PATHS.positions_figure("{benchmark}"), "positions", "Benchmarks", "{benchmark}"),
    log:
        PATHS.log("plot_positional_distribution", "{benchmark}"),
    conda:
        "../envs/evaluation.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        job=job(BENCHMARKS.positions_figure),
    script:
        "../scripts/plot_positional_distribution.py"


rule build_text_collection:
    input:
        unpack(BENCHMARKS.collection_source),
    output:
        **PATHS.collection_outputs("{collection}"),
    log:
        PATHS.log("build_text_collection", "{collection}"),
    priority: TEXTS_PRIORITY
    conda:
        "../envs/benchmarks.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        job=job(BENCHMARKS.collection),
    script:
        "../scripts/build_text_collection.py"
