# Scoring runs per query, aggregating into bins and buckets (PosIR 5.2), and the tables and figures of a benchmark.


rule score_run:
    input:
        unpack(score_run_inputs),
    output:
        per_query=f"{RESULTS}/scores/{{benchmark}}/{{model}}/{{setting}}.tsv",
        bins=f"{RESULTS}/aggregates/{{benchmark}}/{{model}}/{{setting}}.bins.tsv",
        summary=f"{RESULTS}/aggregates/{{benchmark}}/{{model}}/{{setting}}.summary.tsv",
        bootstrap=f"{RESULTS}/aggregates/{{benchmark}}/{{model}}/{{setting}}.bootstrap.tsv",
        bootstrap_bins=f"{RESULTS}/aggregates/{{benchmark}}/{{model}}/{{setting}}.bootstrap_bins.tsv",
        trend=f"{RESULTS}/aggregates/{{benchmark}}/{{model}}/{{setting}}.trend.tsv",
        figure=reported(
            f"{RESULTS}/figures/{{benchmark}}/{{model}}/{{setting}}.png",
            "position_curve",
            "Figures",
            "{benchmark}",
            model="{model}",
            setting="{setting}",
        ),
    log:
        f"{RESULTS}/logs/score_run/{{benchmark}}/{{model}}/{{setting}}.log",
    conda:
        "../envs/evaluation.yaml"
    # Peak RSS measured: 1097 MB for 330 MB of input (a 1000-deep run of 10570 queries), ~3 MB per MB.
    resources:
        mem_mb=input_scaled_mem_mb(150, 3),
        runtime=15,
    params:
        id_prefixes=corpus_id_prefixes,
        languages_outside_model=languages_outside_model_of,
        metrics=METRICS_CONFIG,
    script:
        "../scripts/score_run.py"


rule main_table:
    input:
        summaries=aggregates_of_benchmark("summary"),
        bootstraps=aggregates_of_benchmark("bootstrap"),
        trends=aggregates_of_benchmark("trend"),
    output:
        csv=reported(f"{RESULTS}/tables/{{benchmark}}/main.csv", "main_table", "Tables", "{benchmark}"),
        markdown=reported(f"{RESULTS}/tables/{{benchmark}}/main.md", "main_table", "Tables", "{benchmark}"),
        long=f"{RESULTS}/tables/{{benchmark}}/main_long.csv",
        trends=f"{RESULTS}/tables/{{benchmark}}/trends.csv",
        trends_markdown=reported(f"{RESULTS}/tables/{{benchmark}}/trends.md", "trend_table", "Tables", "{benchmark}"),
    log:
        f"{RESULTS}/logs/main_table/{{benchmark}}.log",
    conda:
        "../envs/evaluation.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        panels=panel_keys,
        metrics=TABLE_CONFIG,
    script:
        "../scripts/main_table.py"


rule plot_position_grid:
    input:
        bins=aggregates_of_benchmark("bins"),
        bands=aggregates_of_benchmark("bootstrap_bins"),
    output:
        figure=reported(
            f"{RESULTS}/figures/{{benchmark}}/grid.png",
            "position_grid",
            "Figures",
            "{benchmark}",
            model="all",
            setting="all",
        ),
    log:
        f"{RESULTS}/logs/plot_position_grid/{{benchmark}}.log",
    conda:
        "../envs/evaluation.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        panels=panel_keys,
        metrics=TABLE_CONFIG,
    script:
        "../scripts/plot_position_grid.py"


rule plot_setting_grid:
    input:
        bins=aggregates_of_setting("bins"),
        bands=aggregates_of_setting("bootstrap_bins"),
    output:
        figure=reported(
            f"{RESULTS}/figures/{{benchmark}}/grid-{{setting}}.png",
            "position_grid",
            "Figures",
            "{benchmark}",
            model="all",
            setting="{setting}",
        ),
    log:
        f"{RESULTS}/logs/plot_setting_grid/{{benchmark}}/{{setting}}.log",
    conda:
        "../envs/evaluation.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        models=models_of_setting,
        metrics=TABLE_CONFIG,
    script:
        "../scripts/plot_setting_grid.py"


rule languages_table:
    input:
        summaries=aggregates_of_benchmark("summary"),
    output:
        csv=reported(f"{RESULTS}/tables/{{benchmark}}/languages.csv", "languages_table", "Tables", "{benchmark}"),
        markdown=reported(f"{RESULTS}/tables/{{benchmark}}/languages.md", "languages_table", "Tables", "{benchmark}"),
    log:
        f"{RESULTS}/logs/languages_table/{{benchmark}}.log",
    conda:
        "../envs/evaluation.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        panels=panel_keys,
        metrics=TABLE_CONFIG,
    script:
        "../scripts/languages_table.py"


rule language_bias:
    input:
        runs=one_vs_many_runs,
    output:
        csv=reported(f"{RESULTS}/tables/{{benchmark}}/language_bias.csv", "language_bias", "Tables", "{benchmark}"),
        markdown=f"{RESULTS}/tables/{{benchmark}}/language_bias.md",
        figure=reported(
            f"{RESULTS}/figures/{{benchmark}}/language_bias.png",
            "language_bias",
            "Figures",
            "{benchmark}",
            model="all",
            setting="one-vs-many",
        ),
    log:
        f"{RESULTS}/logs/language_bias/{{benchmark}}.log",
    conda:
        "../envs/evaluation.yaml"
    # Peak RSS measured: 296 MB over 2.7 GB of runs (read to depth 100, not held).
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        runs=one_vs_many_keys,
        depth=100,
    script:
        "../scripts/language_bias.py"
