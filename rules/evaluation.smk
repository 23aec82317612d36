rule score_run:
    input:
        unpack(score_run_inputs),
    output:
        per_query=f"{RESULTS}/scores/{{benchmark}}/{{model}}/{{setting}}.tsv",
        bins=f"{RESULTS}/aggregates/{{benchmark}}/{{model}}/{{setting}}.bins.tsv",
        summary=f"{RESULTS}/aggregates/{{benchmark}}/{{model}}/{{setting}}.summary.tsv",
        bootstrap=f"{RESULTS}/aggregates/{{benchmark}}/{{model}}/{{setting}}.bootstrap.tsv",
        bootstrap_bins=f"{RESULTS}/aggregates/{{benchmark}}/{{model}}/{{setting}}.bootstrap_bins.tsv",
        figure=report(
            f"{RESULTS}/figures/{{benchmark}}/{{model}}/{{setting}}.png",
            caption="../report/position_curve.rst",
            category="Figures",
            subcategory="{benchmark}",
            labels={"model": "{model}", "setting": "{setting}"},
        ),
    params:
        id_prefixes=corpus_id_prefixes,
        languages_outside_model=languages_outside_model_of,
        metrics=METRICS_CONFIG,
    log:
        f"{RESULTS}/logs/score_run/{{benchmark}}/{{model}}/{{setting}}.log",
    resources:
        mem_mb=2000,
        runtime=15,
    conda:
        "../envs/evaluation.yaml"
    script:
        "../scripts/score_run.py"


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


rule plot_setting_grid:
    input:
        bins=bins_of_setting,
        bands=bootstrap_bins_of_setting,
    output:
        figure=report(
            f"{RESULTS}/figures/{{benchmark}}/grid-{{setting}}.png",
            caption="../report/position_grid.rst",
            category="Figures",
            subcategory="{benchmark}",
            labels={"model": "all", "setting": "{setting}"},
        ),
    params:
        models=models_of_setting,
        metrics=METRICS_CONFIG,
    log:
        f"{RESULTS}/logs/plot_setting_grid/{{benchmark}}/{{setting}}.log",
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../envs/evaluation.yaml"
    script:
        "../scripts/plot_setting_grid.py"


rule languages_table:
    input:
        summaries=summaries_of_benchmark,
    output:
        csv=report(
            f"{RESULTS}/tables/{{benchmark}}/languages.csv",
            caption="../report/languages_table.rst",
            category="Tables",
            subcategory="{benchmark}",
        ),
        markdown=report(
            f"{RESULTS}/tables/{{benchmark}}/languages.md",
            caption="../report/languages_table.rst",
            category="Tables",
            subcategory="{benchmark}",
        ),
    params:
        panels=panel_keys,
        metrics=METRICS_CONFIG,
    log:
        f"{RESULTS}/logs/languages_table/{{benchmark}}.log",
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../envs/evaluation.yaml"
    script:
        "../scripts/languages_table.py"


rule language_bias:
    input:
        runs=one_vs_many_runs,
    output:
        csv=report(
            f"{RESULTS}/tables/{{benchmark}}/language_bias.csv",
            caption="../report/language_bias.rst",
            category="Tables",
            subcategory="{benchmark}",
        ),
        markdown=f"{RESULTS}/tables/{{benchmark}}/language_bias.md",
        figure=report(
            f"{RESULTS}/figures/{{benchmark}}/language_bias.png",
            caption="../report/language_bias.rst",
            category="Figures",
            subcategory="{benchmark}",
            labels={"model": "all", "setting": "one-vs-many"},
        ),
    params:
        runs=one_vs_many_keys,
        depth=100,
    log:
        f"{RESULTS}/logs/language_bias/{{benchmark}}.log",
    resources:
        mem_mb=2000,
        runtime=10,
    conda:
        "../envs/evaluation.yaml"
    script:
        "../scripts/language_bias.py"
