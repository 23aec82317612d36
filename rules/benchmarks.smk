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
    params:
        entry=benchmark_entry,
        metrics=METRICS_CONFIG,
    wildcard_constraints:
        benchmark=benchmarks_built_by("squad_long_documents"),
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
