rule build_benchmark:
    input:
        unpack(benchmark_source_files),
    output:
        corpus=f"{RESULTS}/benchmarks/{{benchmark}}/corpus.jsonl",
        queries=f"{RESULTS}/benchmarks/{{benchmark}}/queries.jsonl",
        qrels=f"{RESULTS}/benchmarks/{{benchmark}}/qrels/test.tsv",
        positions=f"{RESULTS}/benchmarks/{{benchmark}}/positions.tsv",
        drops=f"{RESULTS}/benchmarks/{{benchmark}}/drops.tsv",
        card=f"{RESULTS}/benchmarks/{{benchmark}}/card.json",
        documents=f"{RESULTS}/benchmarks/{{benchmark}}/documents.tsv",
        paragraphs=f"{RESULTS}/benchmarks/{{benchmark}}/paragraphs.tsv",
    wildcard_constraints:
        benchmark=names_with_builder(SQUAD_BUILDER),
    params:
        entry=benchmark_entry,
        metrics=POSITION_CONFIG,
    log:
        f"{RESULTS}/logs/build_benchmark/{{benchmark}}.log",
    benchmark:
        f"{RESULTS}/timing/build_benchmark/{{benchmark}}.tsv"
    threads: 1
    resources:
        mem_mb=3000,
        runtime=30,
    conda:
        "../envs/benchmarks.yaml"
    script:
        "../scripts/build_benchmark.py"


rule build_cross_lingual_variant:
    input:
        unpack(cross_lingual_inputs),
    output:
        queries=f"{RESULTS}/benchmarks/{{benchmark}}-{{language}}/queries.jsonl",
        qrels=f"{RESULTS}/benchmarks/{{benchmark}}-{{language}}/qrels/test.tsv",
        positions=f"{RESULTS}/benchmarks/{{benchmark}}-{{language}}/positions.tsv",
        drops=f"{RESULTS}/benchmarks/{{benchmark}}-{{language}}/drops.tsv",
        card=f"{RESULTS}/benchmarks/{{benchmark}}-{{language}}/card.json",
    wildcard_constraints:
        benchmark=names_with_builder(CROSS_LINGUAL_BUILDER),
    params:
        entry=benchmark_entry,
        metrics=POSITION_CONFIG,
    log:
        f"{RESULTS}/logs/build_cross_lingual_variant/{{benchmark}}-{{language}}.log",
    threads: 1
    resources:
        mem_mb=2000,
        runtime=15,
    conda:
        "../envs/benchmarks.yaml"
    script:
        "../scripts/build_cross_lingual_variant.py"


rule build_parallel_variant:
    input:
        unpack(variant_source_files),
    output:
        corpus=f"{RESULTS}/benchmarks/{{benchmark}}-{{language}}/corpus.jsonl",
        queries=f"{RESULTS}/benchmarks/{{benchmark}}-{{language}}/queries.jsonl",
        qrels=f"{RESULTS}/benchmarks/{{benchmark}}-{{language}}/qrels/test.tsv",
        positions=f"{RESULTS}/benchmarks/{{benchmark}}-{{language}}/positions.tsv",
        drops=f"{RESULTS}/benchmarks/{{benchmark}}-{{language}}/drops.tsv",
        card=f"{RESULTS}/benchmarks/{{benchmark}}-{{language}}/card.json",
        documents=f"{RESULTS}/benchmarks/{{benchmark}}-{{language}}/documents.tsv",
    wildcard_constraints:
        benchmark=names_with_builder(PARALLEL_BUILDER),
    params:
        entry=benchmark_entry,
        metrics=POSITION_CONFIG,
    log:
        f"{RESULTS}/logs/build_parallel_variant/{{benchmark}}-{{language}}.log",
    threads: 1
    resources:
        mem_mb=2000,
        runtime=15,
    conda:
        "../envs/benchmarks.yaml"
    script:
        "../scripts/build_parallel_variant.py"


rule plot_positional_distribution:
    input:
        positions=f"{RESULTS}/benchmarks/{{benchmark}}/positions.tsv",
    output:
        figure=report(
            f"{RESULTS}/figures/{{benchmark}}/positions.png",
            caption="../report/positions.rst",
            category="Benchmarks",
            subcategory="{benchmark}",
        ),
    params:
        metrics=METRICS_CONFIG,
    log:
        f"{RESULTS}/logs/plot_positional_distribution/{{benchmark}}.log",
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../envs/evaluation.yaml"
    script:
        "../scripts/plot_positional_distribution.py"


rule build_text_collection:
    input:
        unpack(collection_source),
    output:
        corpus=f"{RESULTS}/benchmarks/{{benchmark}}/corpus.jsonl",
        drops=f"{RESULTS}/benchmarks/{{benchmark}}/drops.tsv",
        card=f"{RESULTS}/benchmarks/{{benchmark}}/card.json",
    wildcard_constraints:
        benchmark=text_collection_names(),
    params:
        entry=collection_entry,
    log:
        f"{RESULTS}/logs/build_text_collection/{{benchmark}}.log",
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../envs/benchmarks.yaml"
    script:
        "../scripts/build_text_collection.py"
