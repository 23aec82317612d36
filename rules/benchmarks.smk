# Benchmarks built from checksummed sources (SQuAD-format files), their per-language variants, the
# evidence-position figure of each, and text collections. Every benchmark-producing rule declares its outputs
# with benchmark_outputs(): the files of the contract (posir.benchmark), written by posir.benchmark.finish.


rule build_benchmark:
    input:
        unpack(benchmark_source_files),
    output:
        **benchmark_outputs("{benchmark}", extra=[fmt.PARAGRAPHS]),
    log:
        f"{RESULTS}/logs/build_benchmark/{{benchmark}}.log",
    benchmark:
        f"{RESULTS}/timing/build_benchmark/{{benchmark}}.tsv"
    wildcard_constraints:
        benchmark=names_with_builder(SQUAD),
    conda:
        "../envs/benchmarks.yaml"
    threads: 1
    # Peak RSS measured: 137 MB from SQuAD dev (4.9 MB of JSON); grows with the source file.
    resources:
        mem_mb=input_scaled_mem_mb(100, 15),
        runtime=30,
    params:
        entry=config_value("benchmarks/{benchmark}"),
        metrics=POSITION_CONFIG,
    script:
        "../scripts/build_benchmark.py"


rule build_cross_lingual_variant:
    input:
        unpack(cross_lingual_inputs),
    output:
        **benchmark_outputs("{benchmark}-{language}", query_only=True),
    log:
        f"{RESULTS}/logs/build_cross_lingual_variant/{{benchmark}}-{{language}}.log",
    wildcard_constraints:
        benchmark=names_with_builder(CROSS_LINGUAL),
    conda:
        "../envs/benchmarks.yaml"
    threads: 1
    # Peak RSS measured: 82 MB or less for 3-4 MB of benchmark files.
    resources:
        mem_mb=input_scaled_mem_mb(100, 15),
        runtime=15,
    params:
        entry=config_value("benchmarks/{benchmark}"),
        metrics=POSITION_CONFIG,
    script:
        "../scripts/build_cross_lingual_variant.py"


rule build_parallel_variant:
    input:
        unpack(variant_source_files),
    output:
        **benchmark_outputs("{benchmark}-{language}"),
    log:
        f"{RESULTS}/logs/build_parallel_variant/{{benchmark}}-{{language}}.log",
    wildcard_constraints:
        benchmark=names_with_builder(PARALLEL),
    conda:
        "../envs/benchmarks.yaml"
    threads: 1
    # Peak RSS measured: 82 MB or less for 3-4 MB of benchmark files.
    resources:
        mem_mb=input_scaled_mem_mb(100, 15),
        runtime=15,
    params:
        entry=config_value("benchmarks/{benchmark}"),
        metrics=POSITION_CONFIG,
    script:
        "../scripts/build_parallel_variant.py"


rule plot_positional_distribution:
    input:
        positions=f"{RESULTS}/benchmarks/{{benchmark}}/{fmt.POSITIONS}",
    output:
        figure=reported(f"{RESULTS}/figures/{{benchmark}}/positions.png", "positions", "Benchmarks", "{benchmark}"),
    log:
        f"{RESULTS}/logs/plot_positional_distribution/{{benchmark}}.log",
    conda:
        "../envs/evaluation.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        metrics=TABLE_CONFIG,
    script:
        "../scripts/plot_positional_distribution.py"


rule build_text_collection:
    input:
        unpack(collection_source),
    output:
        corpus=f"{RESULTS}/collections/{{collection}}/{fmt.CORPUS}",
        drops=f"{RESULTS}/collections/{{collection}}/{fmt.DROPS}",
        card=f"{RESULTS}/collections/{{collection}}/{fmt.CARD}",
    log:
        f"{RESULTS}/logs/build_text_collection/{{collection}}.log",
    conda:
        "../envs/benchmarks.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        entry=config_value("text_collections/{collection}"),
    script:
        "../scripts/build_text_collection.py"
