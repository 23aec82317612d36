# Why and how sure: paired tests between the models of a setting, gradient saliency by token position
# (PosIR 5.3) and segment similarity (Zeng et al., Appendix A.4).


rule significance:
    input:
        scores=compared_scores,
    output:
        tests=f"{RESULTS}/tables/{{benchmark}}/significance/{{setting}}.csv",
        psi=f"{RESULTS}/tables/{{benchmark}}/significance/{{setting}}.psi.csv",
        markdown=reported(
            f"{RESULTS}/tables/{{benchmark}}/significance/{{setting}}.md",
            "significance",
            "Tables",
            "{benchmark}",
            setting="{setting}",
        ),
        latex=f"{RESULTS}/tables/{{benchmark}}/significance/{{setting}}.tex",
    log:
        f"{RESULTS}/logs/significance/{{benchmark}}/{{setting}}.log",
    benchmark:
        f"{RESULTS}/timing/significance/{{benchmark}}/{{setting}}.tsv"
    conda:
        "../envs/evaluation.yaml"
    resources:
        mem_mb=3000,
        runtime=60,
    params:
        models=compared_names,
        metrics=METRICS_CONFIG,
    script:
        "../scripts/significance.py"


rule saliency:
    input:
        unpack(analysis_benchmark_files),
    output:
        pairs=f"{RESULTS}/analyses/saliency/{{benchmark}}/{{model}}.pairs.tsv",
        bins=f"{RESULTS}/analyses/saliency/{{benchmark}}/{{model}}.bins.tsv",
        figure=reported(
            f"{RESULTS}/figures/{{benchmark}}/saliency-{{model}}.png",
            "saliency",
            "Analyses",
            "{benchmark}",
            model="{model}",
        ),
    log:
        f"{RESULTS}/logs/saliency/{{benchmark}}/{{model}}.log",
    benchmark:
        f"{RESULTS}/timing/saliency/{{benchmark}}/{{model}}.tsv"
    conda:
        "../envs/retrieval.yaml"
    # backward passes: the rule that gains most from a GPU (a cuda model entry asks for one)
    threads: 2
    resources:
        mem_mb=analysis_mem_mb(1000),
        gpu=encode_gpu,
        runtime=120,
    params:
        model=config_value("models/{model}"),
        section=SALIENCY,
    script:
        "../scripts/saliency.py"


rule representation:
    input:
        unpack(analysis_benchmark_files),
    output:
        segments=f"{RESULTS}/analyses/representation/{{benchmark}}/{{model}}.segments.tsv",
        summary=f"{RESULTS}/analyses/representation/{{benchmark}}/{{model}}.summary.tsv",
        figure=reported(
            f"{RESULTS}/figures/{{benchmark}}/segments-{{model}}.png",
            "segment_similarity",
            "Analyses",
            "{benchmark}",
            model="{model}",
        ),
    log:
        f"{RESULTS}/logs/representation/{{benchmark}}/{{model}}.log",
    benchmark:
        f"{RESULTS}/timing/representation/{{benchmark}}/{{model}}.tsv"
    conda:
        "../envs/retrieval.yaml"
    threads: 1
    resources:
        mem_mb=analysis_mem_mb(500),
        gpu=encode_gpu,
        runtime=120,
    params:
        model=config_value("models/{model}"),
        section=REPRESENTATION,
        metrics=TABLE_CONFIG,
        cache=EMBEDDING_CACHE,
    script:
        "../scripts/representation.py"
