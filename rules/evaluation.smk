rule score_run:
    input:
        unpack(score_run_inputs),
    output:
        per_query=f"{RESULTS}/scores/{{benchmark}}/{{model}}/{{setting}}.tsv",
    log:
        f"{RESULTS}/logs/score_run/{{benchmark}}/{{model}}/{{setting}}.log",
    resources:
        mem_mb=2000,
        runtime=15,
    conda:
        "../envs/evaluation.yaml"
    script:
        "../scripts/score_run.py"


rule aggregate_scores:
    input:
        per_query=f"{RESULTS}/scores/{{benchmark}}/{{model}}/{{setting}}.tsv",
    output:
        bins=f"{RESULTS}/aggregates/{{benchmark}}/{{model}}/{{setting}}.bins.tsv",
        summary=f"{RESULTS}/aggregates/{{benchmark}}/{{model}}/{{setting}}.summary.tsv",
    params:
        metrics=METRICS_CONFIG,
    log:
        f"{RESULTS}/logs/aggregate_scores/{{benchmark}}/{{model}}/{{setting}}.log",
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../envs/evaluation.yaml"
    script:
        "../scripts/aggregate_scores.py"


rule main_table:
    input:
        summaries=summaries_of_benchmark,
        bootstraps=bootstraps_of_benchmark,
    output:
        csv=report(
            f"{RESULTS}/tables/{{benchmark}}/main.csv",
            caption="../report/main_table.rst",
            category="Tables",
            subcategory="{benchmark}",
        ),
        markdown=report(
            f"{RESULTS}/tables/{{benchmark}}/main.md",
            caption="../report/main_table.rst",
            category="Tables",
            subcategory="{benchmark}",
        ),
        long=f"{RESULTS}/tables/{{benchmark}}/main_long.csv",
    params:
        panels=panel_keys,
        metrics=METRICS_CONFIG,
    log:
        f"{RESULTS}/logs/main_table/{{benchmark}}.log",
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../envs/evaluation.yaml"
    script:
        "../scripts/main_table.py"


rule plot_position_curve:
    input:
        bins=f"{RESULTS}/aggregates/{{benchmark}}/{{model}}/{{setting}}.bins.tsv",
        bands=f"{RESULTS}/aggregates/{{benchmark}}/{{model}}/{{setting}}.bootstrap_bins.tsv",
    output:
        figure=report(
            f"{RESULTS}/figures/{{benchmark}}/{{model}}/{{setting}}.png",
            caption="../report/position_curve.rst",
            category="Figures",
            subcategory="{benchmark}",
            labels={"model": "{model}", "setting": "{setting}"},
        ),
    params:
        metrics=METRICS_CONFIG,
    log:
        f"{RESULTS}/logs/plot_position_curve/{{benchmark}}/{{model}}/{{setting}}.log",
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../envs/evaluation.yaml"
    script:
        "../scripts/plot_position_curve.py"


rule plot_position_grid:
    input:
        bins=bins_of_benchmark,
        bands=bootstrap_bins_of_benchmark,
    output:
        figure=report(
            f"{RESULTS}/figures/{{benchmark}}/grid.png",
            caption="../report/position_grid.rst",
            category="Figures",
            subcategory="{benchmark}",
            labels={"model": "all", "setting": "all"},
        ),
    params:
        panels=panel_keys,
        metrics=METRICS_CONFIG,
    log:
        f"{RESULTS}/logs/plot_position_grid/{{benchmark}}.log",
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../envs/evaluation.yaml"
    script:
        "../scripts/plot_position_grid.py"
